package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

const approvalFile = "testdata/approval.json"

// deployProgram reads the untrusted inbox, then deploys, and returns what
// became of the call.
const deployProgram = `await tools.read_inbox({});
try { return await tools.deploy({env: "staging"}) } catch (e: any) { return e.code + ": " + e.message }`

// promptBuffer is a bytes.Buffer safe to write from several goroutines, that
// one can wait on.
type promptBuffer struct {
	mu      sync.Mutex
	changed *sync.Cond
	b       bytes.Buffer
	ended   bool // no more writes will come
}

func newPromptBuffer() *promptBuffer {
	s := &promptBuffer{}
	s.changed = sync.NewCond(&s.mu)
	return s
}

func (s *promptBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.changed.Broadcast()
	return s.b.Write(p)
}

func (s *promptBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until what was written holds sub n times, and reports
// whether it does (false: the writer ended first).
func (s *promptBuffer) waitFor(sub string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for strings.Count(s.b.String(), sub) < n {
		if s.ended {
			return false
		}
		s.changed.Wait()
	}
	return true
}

// end says that no more writes will come.
func (s *promptBuffer) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	s.changed.Broadcast()
}

// terminal returns an approver that asks, reading in and writing out, as
// it does on a terminal.
func terminal(in io.Reader, out io.Writer) *terminalApprover {
	return &terminalApprover{mode: askTerminal, command: "ptcx run", in: &lineReader{r: in}, out: out, turn: make(chan struct{}, 1)}
}

var deployReq = executor.Request{Tool: "deploy", Args: json.RawMessage(`{"env": "staging"}`), Nested: true,
	Labels: api.Label{Integrity: api.Untrusted, Confidentiality: api.Private}}

func TestTerminalApprover_Approve_answers(t *testing.T) {
	for _, tt := range []struct {
		in     string
		want   executor.Approval
		reason string
	}{
		{"y\n", executor.ApproveOnce, ""},
		{"yes\n", executor.ApproveOnce, ""},
		{" Y \n", executor.ApproveOnce, ""},
		{"YES", executor.ApproveOnce, ""}, // the input ends after the answer
		{"n\n", executor.Reject, "declined at the terminal"},
		{"\n", executor.Reject, "declined at the terminal"},
		{"yess\n", executor.Reject, "declined at the terminal"},
		{"maybe y\n", executor.Reject, "declined at the terminal"},
		{"", executor.Reject, "no answer: the terminal's input ended"},
	} {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			var out bytes.Buffer
			got, reason, err := terminal(strings.NewReader(tt.in), &out).Approve(context.Background(), deployReq, "deploy needs approval")
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.reason, reason)
			require.Equal(t, "\nptcx: a call needs your approval\n"+
				"  tool:      deploy (from the run_code program)\n"+
				`  arguments: {"env":"staging"}`+"\n"+
				"  reason:    deploy needs approval\n"+
				"  labels:    untrusted, private (what the program had read when it made the call)\n"+
				"approve this call? [y/N] ", strings.TrimSuffix(out.String(), "\n"))
		})
	}
}

func TestTerminalApprover_Approve_directCall(t *testing.T) {
	var out bytes.Buffer
	req := executor.Request{Tool: "deploy", Args: json.RawMessage(`{}`)}
	got, _, err := terminal(strings.NewReader("y\n"), &out).Approve(context.Background(), req, "q")
	require.NoError(t, err)
	require.Equal(t, executor.ApproveOnce, got)
	require.Contains(t, out.String(), "  tool:      deploy (a direct call)\n")
	require.Contains(t, out.String(), "  labels:    none known (a direct call carries no program's data)\n")
}

// Each question gets its own answer, typed after it is shown: a line read
// before a question (typed ahead) answers nothing, and the input's end
// rejects every question after it.
func TestTerminalApprover_Approve_typedAheadAnswersNothing(t *testing.T) {
	pr, pw := io.Pipe()
	out := newPromptBuffer()
	a := terminal(pr, out)
	read := make(chan struct{}, 8)
	a.in.onRead = func() { read <- struct{}{} }
	answer := func() chan executor.Approval {
		got := make(chan executor.Approval, 1)
		go func() {
			g, _, err := a.Approve(context.Background(), deployReq, "q")
			require.NoError(t, err)
			got <- g
		}()
		return got
	}
	type_ := func(s string) {
		_, err := pw.Write([]byte(s))
		require.NoError(t, err)
		<-read // read and tagged
	}

	got := answer()
	out.waitFor("[y/N] ", 1)
	type_("y\n")
	require.Equal(t, executor.ApproveOnce, <-got)

	type_("y\n") // before the second question
	got = answer()
	out.waitFor("[y/N] ", 2)
	type_("n\n")
	require.Equal(t, executor.Reject, <-got, "the line typed ahead did not approve it")

	require.NoError(t, pw.Close())
	for range 2 {
		require.Equal(t, executor.Reject, <-answer())
	}
	require.Equal(t, 4, strings.Count(out.String(), "approve this call? [y/N] "))
}

// The arguments are quoted on one line within maxPromptArgs bytes, cut at a
// character boundary; what the program put in them cannot drive the
// terminal.
func TestPrompt_argumentsBoundedAndPrintable(t *testing.T) {
	for _, n := range []int{maxPromptArgs - 1, maxPromptArgs, maxPromptArgs + 1} {
		args := `"` + strings.Repeat("é", n) + `"` // 2n+2 bytes
		got := quoteArgs(json.RawMessage(args))
		body, cut, wasCut := strings.Cut(got, " … (cut: ")
		require.LessOrEqual(t, len(body), maxPromptArgs)
		require.True(t, wasCut)
		require.Equal(t, fmt.Sprintf("%d bytes in all)", len(args)), cut)
		require.NotContains(t, body, "\uFFFD", "cut between characters")
	}
	exact := `"` + strings.Repeat("a", maxPromptArgs-2) + `"`
	require.Equal(t, exact, quoteArgs(json.RawMessage(exact)), "at the bound: whole")
	require.Equal(t, `{"a":[1,2]}`, quoteArgs(json.RawMessage("{\n  \"a\": [1,\n 2]\n}")), "compacted to one line")

	// JSON strings may hold C1 controls, DEL and bidirectional overrides
	// raw; the prompt escapes them, and the reason's too.
	hostile := "{\"x\": \"\u009b31m\u007f\u202egpj.exe\U000E0041\"}"
	got := quoteArgs(json.RawMessage(hostile))
	require.Equal(t, `{"x":"\u009b31m\u007f\u202egpj.exe\U000e0041"}`, got)
	require.Equal(t, `a\u001b[2Jb\u000a`, printable("a\x1b[2Jb\n"))
	require.Equal(t, "a\uFFFDb", printable("a\xffb"), "invalid UTF-8 is shown as U+FFFD, never written raw")
	p := prompt(executor.Request{Tool: "t\x1b", Args: json.RawMessage(hostile)}, "why\x07")
	for _, r := range p {
		require.True(t, r == '\n' || r >= ' ' && r != 0x7f && (r < 0x80 || r > 0x9f) && r != 0x202e, "%q in the prompt", r)
	}
}

// A question whose call ends while it waits for an answer is rejected, and
// the next question still gets the next line.
func TestTerminalApprover_Approve_callEnds(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	out := newPromptBuffer()
	a := terminal(pr, out)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan executor.Approval)
	go func() {
		got, _, _ := a.Approve(ctx, deployReq, "q")
		done <- got
	}()
	out.waitFor("[y/N] ", 1)
	cancel()
	require.Equal(t, executor.Reject, <-done)
	require.Contains(t, out.String(), "no answer: the call ended first")

	got := make(chan executor.Approval)
	go func() {
		g, _, _ := a.Approve(context.Background(), deployReq, "q")
		got <- g
	}()
	out.waitFor("[y/N] ", 2)
	_, err := pw.Write([]byte("y\n"))
	require.NoError(t, err)
	require.Equal(t, executor.ApproveOnce, <-got)
}

// Parallel calls are asked one at a time: each answer goes to one
// question, and none is lost.
func TestTerminalApprover_Approve_hammer(t *testing.T) {
	const n = 32
	var in strings.Builder
	for i := range n {
		if i%2 == 0 {
			in.WriteString("y\n")
		} else {
			in.WriteString("n\n")
		}
	}
	pr, pw := io.Pipe()
	out := newPromptBuffer()
	a := terminal(pr, out)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		approved int
	)
	for range n {
		wg.Go(func() {
			got, _, err := a.Approve(context.Background(), deployReq, "q")
			require.NoError(t, err)
			if got == executor.ApproveOnce {
				mu.Lock()
				approved++
				mu.Unlock()
			}
		})
	}
	// One line at a time, each once its question is on the terminal: a
	// line typed before a question answers nothing.
	for i := range n {
		out.waitFor("[y/N] ", i+1)
		_, err := pw.Write([]byte(strings.Split(in.String(), "\n")[i] + "\n"))
		require.NoError(t, err)
	}
	wg.Wait()
	require.Equal(t, n/2, approved)
	require.NoError(t, pw.Close())
}

func TestApprovalFlags(t *testing.T) {
	s := &stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}
	_, err := approvalFlags{approveAll: true, denyAll: true}.approver(s, "ptcx run", true)
	require.EqualError(t, err, "--approve-all and --deny-all cannot go together: pick one")
	for _, tt := range []struct {
		f    approvalFlags
		want approvalMode
	}{
		{approvalFlags{}, cannotAsk}, // a strings.Reader is no terminal
		{approvalFlags{approveAll: true}, approveAll},
		{approvalFlags{denyAll: true}, denyAll},
	} {
		a, err := tt.f.approver(s, "ptcx run", true)
		require.NoError(t, err)
		require.Equal(t, tt.want, a.mode)
	}
}

func writeProgram(t *testing.T, code string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.ts")
	require.NoError(t, os.WriteFile(path, []byte(code), 0o644))
	return path
}

func TestRun_approvalFlags(t *testing.T) {
	prog := writeProgram(t, deployProgram)
	for _, tt := range []struct {
		name    string
		flags   []string
		out     string // the program's result
		errOut  string // on stderr
		status  int
		usageOK bool
	}{
		{name: "approve all", flags: []string{"--approve-all"}, out: `"deployed": true`,
			errOut: "ptcx: approved deploy (--approve-all): deploy needs approval: its declaration says needs_approval\n"},
		{name: "deny all", flags: []string{"--deny-all"}, out: "DENIED: rejected by the approver: denied by --deny-all"},
		{name: "no terminal", out: "DENIED: rejected by the approver: ptcx run cannot ask for approval: its input or error output is not a terminal; " +
			"pass --approve-all or --deny-all to decide without asking"},
		{name: "both", flags: []string{"--approve-all", "--deny-all"}, status: exitUsage,
			errOut: "ptcx run: --approve-all and --deny-all cannot go together: pick one\nsee 'ptcx run --help'\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--no-builtin", "--tools", approvalFile}, tt.flags...)
			out, errOut, status := ptcx(t, "", append(args, prog)...)
			require.Equal(t, tt.status, status, errOut)
			require.Contains(t, out, tt.out)
			if tt.errOut != "" {
				require.Equal(t, tt.errOut, errOut)
			}
		})
	}
}

func TestCall_approvalFlags(t *testing.T) {
	out, errOut, status := ptcx(t, "", "call", "--no-builtin", "--tools", approvalFile, "--approve-all", "deploy", `{"env": "dev"}`)
	require.Equal(t, exitOK, status, errOut)
	require.JSONEq(t, `{"deployed": true}`, string(decodeCall(t, out).Value))
	require.Contains(t, errOut, "ptcx: approved deploy (--approve-all)")

	out, _, status = ptcx(t, "", "call", "--no-builtin", "--tools", approvalFile, "deploy", `{"env": "dev"}`)
	require.Equal(t, exitTool, status)
	c := decodeCall(t, out)
	require.Equal(t, api.CodeDenied, c.Error.Code)
	require.Equal(t, "needs_approval", c.Error.Policy.Rule)
	require.Contains(t, c.Error.Message, "ptcx call cannot ask for approval")

	_, errOut, status = ptcx(t, "", "call", "--approve-all", "--deny-all", "deploy")
	require.Equal(t, exitUsage, status)
	require.Contains(t, errOut, "cannot go together")
}

func TestRun_help_documentsApproval(t *testing.T) {
	_, errOut, status := ptcx(t, "", "run", "--help")
	require.Equal(t, exitOK, status)
	for _, want := range []string{"-approve-all", "-deny-all", "needs_approval", "on the terminal (y/N)"} {
		require.Contains(t, errOut, want)
	}
}

// ptcx batch never asks: --approve-all and --deny-all decide, and without
// either a call that asks is denied, saying which flag to pass.
func TestBatch_approvalFlags(t *testing.T) {
	items := writeItems(t, []string{item("a", deployProgram), item("b", deployProgram)})
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"approve all", []string{"--approve-all"}, `"deployed": true`},
		{"deny all", []string{"--deny-all"}, "DENIED: rejected by the approver: denied by --deny-all"},
		{"neither", nil, "DENIED: rejected by the approver: ptcx batch cannot ask for approval: it runs unattended; " +
			"pass --approve-all or --deny-all to decide without asking"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			args := append([]string{"batch", "--no-builtin", "--tools", approvalFile, "--out", out}, tt.flags...)
			_, errOut, status := ptcx(t, "", append(args, items)...)
			require.Equal(t, exitOK, status, errOut)
			require.NotContains(t, errOut, "approved deploy", "an unattended batch logs no approvals")
			lines := readLines(t, out)
			require.Len(t, lines, 2)
			for _, l := range lines {
				require.True(t, l.OK, l.Text)
				require.Contains(t, l.Text, tt.want)
			}
		})
	}
	_, errOut, status := ptcx(t, "", "batch", "--approve-all", "--deny-all", items)
	require.Equal(t, exitUsage, status)
	require.Contains(t, errOut, "cannot go together")
}
