package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"unicode"

	"golang.org/x/term"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/text"
)

// The approver of ptcx run, call and batch: a call that asks (a tool
// declared "needs_approval", a data-flow rule with "on_violation": "ask") is
// put to the person at the terminal (run and call), or decided by
// --approve-all or --deny-all (docs/cli.md, "Approvals").

// maxPromptArgs is how much of a call's arguments the prompt quotes: enough
// to read what the call does, bounded so that a program cannot fill the
// terminal with one call.
const maxPromptArgs = 1024

// approvalFlags are --approve-all and --deny-all.
type approvalFlags struct {
	approveAll, denyAll bool
}

// register adds the flags to fs; attended as for approver.
func (f *approvalFlags) register(fs *flag.FlagSet, attended bool) {
	logged := ""
	if attended {
		logged = "; each is logged on stderr"
	}
	fs.BoolVar(&f.approveAll, "approve-all", false, "approve every call that asks for approval (a tool declared needs_approval, a data-flow rule with on_violation ask), without asking"+logged)
	fs.BoolVar(&f.denyAll, "deny-all", false, "deny every call that asks for approval, without asking")
}

// approvalMode is how the approver decides.
type approvalMode int

const (
	askTerminal approvalMode = iota // prompt on the terminal and read y/N
	approveAll                      // --approve-all
	denyAll                         // --deny-all
	cannotAsk                       // no terminal and no flag: deny, saying which flag to pass
)

// approver returns the approver of command (as the user typed it: "ptcx
// run") for s, or a usage error when both flags are given. An attended
// command asks on the terminal when s's input and error output are both
// one, and logs what --approve-all approved; an unattended one (batch:
// parallel runs, a progress bar on stderr) never asks, and logs nothing.
func (f approvalFlags) approver(s *stdio, command string, attended bool) (*terminalApprover, error) {
	a := &terminalApprover{command: command, turn: make(chan struct{}, 1), out: io.Discard}
	if attended {
		a.out = s.err
	}
	switch {
	case f.approveAll && f.denyAll:
		return nil, errors.New("--approve-all and --deny-all cannot go together: pick one")
	case f.approveAll:
		a.mode = approveAll
	case f.denyAll:
		a.mode = denyAll
	case attended && isTerminal(s.in) && isTerminal(s.err):
		a.mode = askTerminal
		a.in = &lineReader{r: s.in}
	case attended:
		a.mode = cannotAsk
		a.why = "its input or error output is not a terminal"
	default:
		a.mode = cannotAsk
		a.why = "it runs unattended"
	}
	return a, nil
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalApprover is an executor.Approver. Questions are asked one at a
// time (a program's parallel calls wait their turn); a call whose context
// ends while it waits is rejected.
type terminalApprover struct {
	mode    approvalMode
	command string
	why     string      // cannotAsk's: why it cannot
	in      *lineReader // askTerminal's
	out     io.Writer
	turn    chan struct{} // held while a question is on the terminal
}

// Approve implements executor.Approver.
func (a *terminalApprover) Approve(ctx context.Context, req executor.Request, question string) (executor.Approval, string, error) {
	switch a.mode {
	case approveAll:
		fmt.Fprintf(a.out, "ptcx: approved %s (--approve-all): %s\n", printable(req.Tool), printable(question))
		return executor.ApproveOnce, "", nil
	case denyAll:
		return executor.Reject, "denied by --deny-all", nil
	case cannotAsk:
		return executor.Reject, fmt.Sprintf("%s cannot ask for approval: %s; "+
			"pass --approve-all or --deny-all to decide without asking", a.command, a.why), nil
	}
	select {
	case a.turn <- struct{}{}:
	case <-ctx.Done():
		return executor.Reject, "the call ended while it waited for another's approval", nil
	}
	defer func() { <-a.turn }()
	q := a.in.ask()
	fmt.Fprint(a.out, prompt(req, question))
	line, err := a.in.next(ctx, q)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(a.out, "\nptcx: no answer: the call ended first")
		return executor.Reject, "the call ended before an answer", nil
	case err != nil:
		fmt.Fprintln(a.out)
		return executor.Reject, "no answer: the terminal's input ended", nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return executor.ApproveOnce, "", nil
	}
	return executor.Reject, "declined at the terminal", nil
}

// prompt is the question on the terminal: the tool, its arguments (cut
// to maxPromptArgs), the reason and the call's labels, every part made
// printable (a program chooses its arguments: no escape sequence of theirs
// reaches the terminal).
func prompt(req executor.Request, question string) string {
	var b strings.Builder
	b.WriteString("\nptcx: a call needs your approval\n")
	from := "a direct call"
	if req.Nested {
		from = "from the run_code program"
	}
	fmt.Fprintf(&b, "  tool:      %s (%s)\n", printable(req.Tool), from)
	fmt.Fprintf(&b, "  arguments: %s\n", quoteArgs(req.Args))
	fmt.Fprintf(&b, "  reason:    %s\n", printable(question))
	if req.Nested {
		fmt.Fprintf(&b, "  labels:    %s (what the program had read when it made the call)\n", req.Labels)
	} else {
		b.WriteString("  labels:    none known (a direct call carries no program's data)\n")
	}
	b.WriteString("approve this call? [y/N] ")
	return b.String()
}

// quoteArgs returns args on one line, within maxPromptArgs bytes, cut at a
// character boundary, printable.
func quoteArgs(args json.RawMessage) string {
	s := string(args)
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err == nil {
		s = buf.String()
	}
	out := printable(text.Truncate(s, maxPromptArgs))
	if len(s) > maxPromptArgs {
		out += fmt.Sprintf(" … (cut: %d bytes in all)", len(s))
	}
	return out
}

// printable returns s with every character a terminal would not print as
// itself (controls, escapes, format characters such as bidirectional
// overrides, invalid UTF-8) written as a \u escape or U+FFFD.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar, unicode.IsPrint(r):
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// lineReader reads a terminal's lines on a goroutine of its own, started
// at the first question, so that a question whose call ends stops waiting
// (the goroutine stays blocked on the terminal until the process exits).
// Each line is tagged with the number of questions shown when it was read,
// so that a line read before a question (typed ahead, or an answer to
// nothing) does not answer it.
type lineReader struct {
	r      io.Reader
	shown  atomic.Int64 // questions shown so far
	lines  chan line
	err    error  // why lines was closed
	onRead func() // tests: called once a line is read and tagged
}

type line struct {
	text  string
	shown int64 // questions shown when it was read
}

// ask counts a question about to be shown, and returns its number.
func (l *lineReader) ask() int64 {
	return l.shown.Add(1)
}

func (l *lineReader) start() {
	if l.lines != nil {
		return
	}
	l.lines = make(chan line)
	go func() {
		sc := bufio.NewScanner(l.r)
		for sc.Scan() {
			ln := line{text: sc.Text(), shown: l.shown.Load()}
			if l.onRead != nil {
				l.onRead()
			}
			l.lines <- ln
		}
		l.err = sc.Err()
		if l.err == nil {
			l.err = io.EOF
		}
		close(l.lines)
	}()
}

// next returns the first line read since question q was shown, or the
// input's end, or ctx's.
func (l *lineReader) next(ctx context.Context, q int64) (string, error) {
	l.start()
	for {
		select {
		case ln, ok := <-l.lines:
			if !ok {
				return "", l.err
			}
			if ln.shown < q {
				continue // read before the question was shown
			}
			return ln.text, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
