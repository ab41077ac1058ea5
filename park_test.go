package ptcx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// parkWorld counts its tools' runs: count (before an approval, to show
// nothing is replayed), send (needs approval), inbox (untrusted results),
// ask_user (answers later).
type parkWorld struct {
	mu  sync.Mutex
	ran map[string]int
}

type sendArgs struct {
	To string `json:"to"`
}

type question struct {
	Q string `json:"q"`
}

func (w *parkWorld) inc(tool string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ran == nil {
		w.ran = map[string]int{}
	}
	w.ran[tool]++
	return w.ran[tool]
}

func (w *parkWorld) ranOf(tool string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ran[tool]
}

func (w *parkWorld) tools() []ptcx.Tool {
	return []ptcx.Tool{
		ptcx.Func("count", "Count.", func(context.Context, struct{}) (int, error) { return w.inc("count"), nil }, ptcx.ConcurrencySafe()),
		ptcx.Func("send", "Send a message.", func(_ context.Context, a sendArgs) (string, error) {
			w.inc("send")
			return "sent " + a.To, nil
		}, ptcx.NeedsApproval(), ptcx.ConcurrencySafe()),
		ptcx.Func("inbox", "Read the inbox.", func(context.Context, struct{}) (string, error) {
			w.inc("inbox")
			return "mallory", nil
		}, ptcx.Labels(ptcx.Label{Integrity: api.Untrusted})),
		ptcx.Func("ask_user", "Ask the user.", func(_ context.Context, q question) (string, error) {
			w.inc("ask_user")
			return "the body answered", nil
		}, ptcx.ConcurrencySafe()),
	}
}

// newParkHost is a ptc host of w's tools whose approvals park and whose
// ask_user answers later.
func newParkHost(t *testing.T, w *parkWorld, opts ...ptcx.Option) *ptcx.Host {
	t.Helper()
	return newSandboxHost(t, append([]ptcx.Option{ptcx.WithMode(ptcx.ModePTC), ptcx.WithParkedApprovals(),
		ptcx.WithParkedTools("ask_user"), ptcx.WithTools(w.tools()...)}, opts...)...)
}

// mustPark runs code parkably and requires it to park.
func mustPark(t *testing.T, h *ptcx.Host, id, code string) *ptcx.Parked {
	t.Helper()
	r, p := h.ExecuteParkable(context.Background(), runCode(id, code))
	require.NotNil(t, p, "the program did not park: %s %v", r.Text, r.Err)
	require.Equal(t, ptcx.Result{}, r)
	return p
}

// only returns p's one parked call.
func only(t *testing.T, p *ptcx.Parked) ptcx.ParkedCall {
	t.Helper()
	calls := p.Calls()
	require.Len(t, calls, 1)
	return calls[0]
}

const sendAfterCount = `const n = await tools.count({});
try { return [n, await tools.send({to: "bob"})] } catch (e) { return [n, e.code, e.message] }`

func TestHost_ExecuteParkable_approved(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	p := mustPark(t, h, "c1", sendAfterCount)
	require.Equal(t, "c1", p.ExecutionID())
	c := only(t, p)
	require.Equal(t, ptcx.ParkedApproval, c.Kind)
	require.Equal(t, "send", c.Tool)
	require.JSONEq(t, `{"to": "bob"}`, string(c.Args))
	require.Contains(t, c.Reason, "needs_approval")
	require.True(t, strings.HasPrefix(c.ID, "c1:ptc:"), c.ID)
	require.Equal(t, ptcx.Label{}, c.Labels)
	require.Equal(t, 1, w.ranOf("count"))
	require.Zero(t, w.ranOf("send"), "nothing runs before the decision")

	r, next := p.Resume(context.Background(), map[string]ptcx.Answer{c.ID: ptcx.Approve()})
	require.Nil(t, next)
	require.Nil(t, r.Err, r.Text)
	require.Equal(t, "c1", r.ID)
	require.JSONEq(t, `[1, "sent bob"]`, r.Text)
	require.Equal(t, 1, w.ranOf("count"), "the program continued where it stopped: count ran once in all")
	require.Equal(t, 1, w.ranOf("send"))
}

func TestHost_ExecuteParkable_declined(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	p := mustPark(t, h, "c1", sendAfterCount)
	r, next := p.Resume(context.Background(), map[string]ptcx.Answer{only(t, p).ID: ptcx.Decline("not to bob")})
	require.Nil(t, next)
	require.Nil(t, r.Err, r.Text)
	var got []any
	require.NoError(t, json.Unmarshal([]byte(r.Text), &got))
	require.Equal(t, []any{1.0, "DENIED"}, got[:2])
	require.Contains(t, got[2], "not to bob", "the program sees the reason")
	require.Zero(t, w.ranOf("send"))
	require.Equal(t, 1, w.ranOf("count"))
}

func TestHost_ExecuteParkable_labelsOfTheCall(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	p := mustPark(t, h, "c1", `const who = await tools.inbox({}); return await tools.send({to: who})`)
	c := only(t, p)
	require.Equal(t, api.Untrusted, c.Labels.Integrity, "the approval carries what flowed into the program")
	require.JSONEq(t, `{"to": "mallory"}`, string(c.Args))
	require.Equal(t, api.KindAbort, p.Discard(context.Background()).Err.Kind)
	require.Zero(t, w.ranOf("send"))
}

func TestHost_ExecuteParkable_parksAgain(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	p := mustPark(t, h, "c1", `await tools.count({}); await tools.send({to: "a"}); return await tools.send({to: "b"})`)
	first := only(t, p)
	r, next := p.Resume(ctx, map[string]ptcx.Answer{first.ID: ptcx.Approve()})
	require.NotNil(t, next, "the second send parks it again: %v", r.Err)
	require.NotSame(t, p, next)
	second := only(t, next)
	require.NotEqual(t, first.ID, second.ID)
	require.JSONEq(t, `{"to": "b"}`, string(second.Args))
	r, next = next.Resume(ctx, map[string]ptcx.Answer{second.ID: ptcx.Approve()})
	require.Nil(t, next)
	require.Equal(t, "sent b", r.Text)
	require.Equal(t, 1, w.ranOf("count"))
	require.Equal(t, 2, w.ranOf("send"))
}

func TestHost_ExecuteParkable_unansweredApprovalAsksAgain(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	p := mustPark(t, h, "c1", sendAfterCount)
	r, next := p.Resume(context.Background(), nil)
	require.NotNil(t, next, "an approval left unanswered is asked again: %v", r.Err)
	require.Equal(t, ptcx.ParkedApproval, only(t, next).Kind)
	require.Zero(t, w.ranOf("send"))
	require.Equal(t, 1, w.ranOf("count"))
}

func TestHost_ExecuteParkable_toolsThatAnswerLater(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	code := `try { return "got " + await tools.ask_user({q: "colour?"}) } catch (e) { return e.code + ": " + e.message }`

	p := mustPark(t, h, "c1", code)
	c := only(t, p)
	require.Equal(t, ptcx.ParkedTool, c.Kind)
	require.Equal(t, "ask_user", c.Tool)
	require.Empty(t, c.Reason)
	out, err := api.ValueOutput("blue")
	require.NoError(t, err)
	r, next := p.Resume(ctx, map[string]ptcx.Answer{c.ID: {Output: out}})
	require.Nil(t, next)
	require.Equal(t, "got blue", r.Text)

	p = mustPark(t, h, "c2", code)
	r, _ = p.Resume(ctx, map[string]ptcx.Answer{only(t, p).ID: {Err: errors.New("the user left")}})
	require.Equal(t, "TOOL_FAILED: the user left", r.Text)

	p = mustPark(t, h, "c3", code)
	r, _ = p.Resume(ctx, nil)
	require.Equal(t, "got the body answered", r.Text, "a tool's call left unanswered runs its body")
	require.Equal(t, 1, w.ranOf("ask_user"))
}

func TestHost_ExecuteParkable_aToolThenAnApproval(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	p := mustPark(t, h, "c1", `const who = await tools.ask_user({q: "to whom?"}); return [who, await tools.send({to: who})]`)
	c := only(t, p)
	require.Equal(t, ptcx.ParkedTool, c.Kind)
	out, err := api.ValueOutput("bob")
	require.NoError(t, err)
	r, next := p.Resume(ctx, map[string]ptcx.Answer{c.ID: {Output: out}})
	require.NotNil(t, next, "send parks it again: %v", r.Err)
	c = only(t, next)
	require.Equal(t, ptcx.ParkedApproval, c.Kind)
	require.JSONEq(t, `{"to": "bob"}`, string(c.Args))
	r, next = next.Resume(ctx, map[string]ptcx.Answer{c.ID: ptcx.Approve()})
	require.Nil(t, next)
	require.JSONEq(t, `["bob", "sent bob"]`, r.Text)
	require.Zero(t, w.ranOf("ask_user"))
}

// A call of a tool that answers later, made together with a call of a
// tool that runs here, is dispatched to its body: a program parks only
// when everything it waits on can wait.
func TestHost_ExecuteParkable_laterToolAlongsideAnotherRuns(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	r, p := h.ExecuteParkable(context.Background(), runCode("c1", `return await Promise.all([tools.count({}), tools.ask_user({q: "?"})])`))
	require.Nil(t, p)
	require.JSONEq(t, `[1, "the body answered"]`, r.Text)
}

func TestHost_Execute_parkedApprovalsDenyWhereNoOneCanWait(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w, ptcx.WithMode(ptcx.ModeBoth))
	ctx := context.Background()
	r := h.Execute(ctx, runCode("c1", sendAfterCount))
	require.Nil(t, r.Err, r.Text)
	require.Contains(t, r.Text, "DENIED")
	require.Contains(t, r.Text, "Host.ExecuteParkable")

	for name, run := range map[string]func(ptcx.Call) ptcx.Result{
		"Execute":         func(c ptcx.Call) ptcx.Result { return h.Execute(ctx, c) },
		"ExecuteParkable": func(c ptcx.Call) ptcx.Result { r, p := h.ExecuteParkable(ctx, c); require.Nil(t, p); return r },
	} {
		r := run(ptcx.Call{ID: "d1", Name: "send", Args: json.RawMessage(`{"to": "bob"}`)})
		require.ErrorIs(t, r.AsError(), api.ErrDenied, name)
		require.Contains(t, r.Err.Message, "Host.ExecuteParkable", name)
	}
	require.Zero(t, w.ranOf("send"))
}

func TestHost_ExecuteParkable_withoutTheOptionsIsExecute(t *testing.T) {
	w := &parkWorld{}
	h := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(w.tools()...))
	r, p := h.ExecuteParkable(context.Background(), runCode("c1",
		`const a = await tools.ask_user({q: "?"}); try { return await tools.send({to: "x"}) } catch (e) { return a + "; " + e.message }`))
	require.Nil(t, p)
	require.Equal(t, "the body answered; approval required but no approver is configured: send needs approval: its declaration says needs_approval", r.Text)
	require.Equal(t, 1, w.ranOf("ask_user"), "no tool answers later")
}

func TestHost_ExecuteParkable_refusedBeforeRunning(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	r, p := h.ExecuteParkable(ctx, ptcx.Call{ID: "s1", Name: "run_code", Args: json.RawMessage(`{"code": "1"}`), Session: "s"})
	require.Nil(t, p)
	require.ErrorIs(t, r.AsError(), api.ErrInvalidArgs)
	require.Contains(t, r.Text, "ptcx.WithSessions")

	require.NoError(t, h.Close(ctx))
	r, p = h.ExecuteParkable(ctx, runCode("c1", sendAfterCount))
	require.Nil(t, p)
	require.ErrorIs(t, r.AsError(), ptcx.ErrClosed)
	_, err := h.RestoreParked([]byte("PTCXPARK"))
	require.ErrorIs(t, err, ptcx.ErrClosed)
}

func TestNew_WithParkedTools_invalidNames(t *testing.T) {
	for _, name := range []string{"", "run_code", "two words", strings.Repeat("x", 65)} {
		h, err := ptcx.New(context.Background(), ptcx.WithCodeRuntime(noSandbox{}), ptcx.WithParkedTools("ok", name))
		require.Nil(t, h)
		require.EqualError(t, err, fmt.Sprintf("ptcx: WithParkedTools: %q is not a tool name a program can call", name))
	}
	h := newHost(t, ptcx.WithParkedTools(strings.Repeat("x", 64)), ptcx.WithParkedTools())
	require.NotNil(t, h)
}

func TestParked_MarshalRestore_anotherHost(t *testing.T) {
	ctx := context.Background()
	wa, wb := &parkWorld{}, &parkWorld{}
	a, b := newParkHost(t, wa), newParkHost(t, wb)
	p := mustPark(t, a, "c1", `const n = await tools.count({}); const who = await tools.inbox({});
const s = await tools.send({to: who});
return [n, s, await tools.ask_user({q: "ok?"})]`)
	before := p.Calls()
	data, err := p.Marshal()
	require.NoError(t, err)

	_, err = b.RestoreParked(data)
	require.ErrorIs(t, err, executor.ErrParkedTaken, "held by p in this process: one parked state completes once")
	require.True(t, p.Release())
	require.False(t, p.Release())
	_, err = p.Marshal()
	require.ErrorContains(t, err, "ptcx: Marshal: this parked execution was already resumed, discarded or released")

	q, err := b.RestoreParked(data)
	require.NoError(t, err)
	require.Equal(t, "c1", q.ExecutionID())
	require.Equal(t, before, q.Calls(), "the same calls, ids, reasons and labels")
	c := only(t, q)
	require.Equal(t, ptcx.ParkedApproval, c.Kind)
	require.Equal(t, api.Untrusted, c.Labels.Integrity)
	r, next := q.Resume(ctx, map[string]ptcx.Answer{c.ID: ptcx.Approve()})
	require.NotNil(t, next, "ask_user parks it again, on b: %v", r.Err)
	c = only(t, next)
	require.Equal(t, ptcx.ParkedTool, c.Kind)
	out, err := api.ValueOutput("sure")
	require.NoError(t, err)
	r, next = next.Resume(ctx, map[string]ptcx.Answer{c.ID: {Output: out}})
	require.Nil(t, next)
	require.Nil(t, r.Err, r.Text)
	require.JSONEq(t, `[1, "sent mallory", "sure"]`, r.Text)
	require.Equal(t, map[string]int{"count": 1, "inbox": 1}, wa.ran, "before it parked, on a")
	require.Equal(t, map[string]int{"send": 1}, wb.ran, "after, on b")

	_, err = b.RestoreParked(data)
	require.ErrorIs(t, err, executor.ErrParkedTaken, "resumed already")
}

func TestHost_RestoreParked_refused(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	p := mustPark(t, h, "c1", sendAfterCount)
	data, err := p.Marshal()
	require.NoError(t, err)
	require.True(t, p.Release())

	// A host without send cannot continue the program.
	other := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithParkedApprovals(), ptcx.WithTools(w.tools()[0]))
	for _, tc := range []struct {
		name string
		h    *ptcx.Host
		data []byte
		is   error
	}{
		{"nil", h, nil, executor.ErrParkedFormat},
		{"not parked bytes", h, []byte("hello"), executor.ErrParkedFormat},
		{"truncated", h, data[:len(data)/2], executor.ErrParkedFormat},
		{"corrupt", h, flipByte(data, len(data)-10), executor.ErrParkedFormat},
		{"another tool set", other, data, executor.ErrParkedIncompatible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := tc.h.RestoreParked(tc.data)
			require.Nil(t, q)
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, "ptcx: RestoreParked: ")
		})
	}
	q, err := h.RestoreParked(data)
	require.NoError(t, err, "the refusals took nothing")
	require.Equal(t, api.KindAbort, q.Discard(context.Background()).Err.Kind)
}

func flipByte(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0xff
	return c
}

func TestParked_Resume_badAnswers(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	p := mustPark(t, h, "c1", `return await tools.send({to: "bob"})`)
	approval := only(t, p)
	pt := mustPark(t, h, "t1", `return await tools.ask_user({q: "?"})`)
	tool := only(t, pt)
	out, err := api.ValueOutput("x")
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		p       *ptcx.Parked
		answers map[string]ptcx.Answer
		want    string
	}{
		{"unknown id", p, map[string]ptcx.Answer{"c1:ptc:99": ptcx.Approve()},
			`execution c1 does not wait on a call "c1:ptc:99": the ids are its Parked.Calls' (` + approval.ID + ")"},
		{"an id of another execution", p, map[string]ptcx.Answer{tool.ID: ptcx.Approve()}, "does not wait on a call"},
		{"one good, one unknown", p, map[string]ptcx.Answer{approval.ID: ptcx.Approve(), "": ptcx.Approve()}, `does not wait on a call ""`},
		{"a tool's answer for an approval", p, map[string]ptcx.Answer{approval.ID: {Output: out}},
			"waits for an approval: answer it with a Decision (ptcx.Approve, ptcx.Decline), not a tool's output"},
		{"a tool's error for an approval", p, map[string]ptcx.Answer{approval.ID: {Err: errors.New("no")}}, "waits for an approval"},
		{"a decision for a tool's call", pt, map[string]ptcx.Answer{tool.ID: ptcx.Decline("no")},
			"is a tool's call: answer it with its Output or Err, not a Decision"},
		{"an empty decision for a tool's call", pt, map[string]ptcx.Answer{tool.ID: {Decision: &ptcx.Decision{}}}, "not a Decision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, next := tc.p.Resume(ctx, tc.answers)
			require.Same(t, tc.p, next, "still parked, as it was")
			require.ErrorIs(t, r.AsError(), api.ErrInvalidArgs)
			require.Contains(t, r.Text, tc.want)
			require.Equal(t, tc.p.ExecutionID(), r.ID)
			require.Equal(t, "run_code", r.Tool)
		})
	}
	require.Zero(t, w.ranOf("send"))

	r, next := p.Resume(ctx, map[string]ptcx.Answer{approval.ID: ptcx.Approve()})
	require.Nil(t, next)
	require.Equal(t, "sent bob", r.Text, "the right answers work after the wrong ones")
	r, next = pt.Resume(ctx, map[string]ptcx.Answer{tool.ID: {Output: out}})
	require.Nil(t, next)
	require.Equal(t, "x", r.Text)
	require.Zero(t, w.ranOf("ask_user"))

	// Once resumed, p is spent.
	r, next = p.Resume(ctx, map[string]ptcx.Answer{approval.ID: ptcx.Approve()})
	require.Nil(t, next)
	require.ErrorIs(t, r.AsError(), api.ErrInternal)
	require.Contains(t, r.Text, "already resumed")
	require.ErrorIs(t, p.Discard(ctx).AsError(), api.ErrInternal)
	require.False(t, p.Release())
	_, err = p.Marshal()
	require.Error(t, err)
	require.Equal(t, 1, w.ranOf("send"))
}

func TestParked_Resume_afterTheHostClosed(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	p := mustPark(t, h, "c1", sendAfterCount)
	require.NoError(t, h.Close(ctx))
	r, next := p.Resume(ctx, map[string]ptcx.Answer{only(t, p).ID: ptcx.Approve()})
	require.Same(t, p, next)
	require.ErrorIs(t, r.AsError(), ptcx.ErrClosed)
	require.ErrorIs(t, r.AsError(), api.ErrInternal)
	require.Equal(t, ptcx.ErrClosed.Error(), r.Text)

	// Still parked: its bytes move to another host.
	data, err := p.Marshal()
	require.NoError(t, err)
	require.True(t, p.Release())
	q, err := newParkHost(t, w).RestoreParked(data)
	require.NoError(t, err)
	r, next = q.Resume(ctx, map[string]ptcx.Answer{only(t, q).ID: ptcx.Approve()})
	require.Nil(t, next)
	require.JSONEq(t, `[1, "sent bob"]`, r.Text)
}

func TestParked_Discard(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	p := mustPark(t, h, "c1", sendAfterCount)
	r := p.Discard(ctx)
	require.ErrorIs(t, r.AsError(), api.ErrCodeRunFailed)
	require.Equal(t, api.KindAbort, r.Err.Kind)
	require.Equal(t, "c1", r.ID)
	require.NotEmpty(t, r.Text)
	require.ErrorIs(t, p.Discard(ctx).AsError(), api.ErrInternal)
	r, next := p.Resume(ctx, nil)
	require.Nil(t, next)
	require.ErrorIs(t, r.AsError(), api.ErrInternal)
	require.Zero(t, w.ranOf("send"))
}

// Several programs park at once and are resumed at once, each with its
// own decision; each Parked is also resumed from two goroutines, of which
// exactly one wins.
func TestParked_hammer(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	ctx := context.Background()
	const n = 8
	parked := make([]*ptcx.Parked, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, p := h.ExecuteParkable(ctx, runCode(fmt.Sprint("h", i), fmt.Sprintf(
				`await tools.count({}); try { return await tools.send({to: "u%d"}) } catch (e) { return e.code + " " + e.message }`, i)))
			if p == nil {
				t.Errorf("run %d did not park: %s", i, r.Text)
			}
			parked[i] = p
		})
	}
	wg.Wait()
	require.NotContains(t, parked, (*ptcx.Parked)(nil))
	results := make([][2]ptcx.Result, n)
	for i, p := range parked {
		id := only(t, p).ID
		answer := ptcx.Approve()
		if i%2 == 1 {
			answer = ptcx.Decline(fmt.Sprint("no to u", i))
		}
		for j := range 2 {
			wg.Go(func() {
				r, next := p.Resume(ctx, map[string]ptcx.Answer{id: answer})
				if next != nil {
					t.Errorf("run %d parked again", i)
				}
				results[i][j] = r
			})
		}
	}
	wg.Wait()
	for i, rs := range results {
		won := 0
		for _, r := range rs {
			if r.Err != nil {
				require.ErrorIs(t, r.AsError(), api.ErrInternal, "the loser is told")
				continue
			}
			won++
			if i%2 == 0 {
				require.Equal(t, fmt.Sprint("sent u", i), r.Text)
			} else {
				require.Contains(t, r.Text, "DENIED")
				require.Contains(t, r.Text, fmt.Sprint("no to u", i))
			}
		}
		require.Equal(t, 1, won, "run %d", i)
	}
	require.Equal(t, n, w.ranOf("count"))
	require.Equal(t, n/2, w.ranOf("send"))
}

func TestHost_ExecuteParkable_manyApprovalsAtOnce(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	p := mustPark(t, h, "c1", `return await Promise.allSettled(["a", "b", "c", "d", "e"].map(to => tools.send({to})))
  .then(rs => rs.map(r => r.status === "fulfilled" ? r.value : r.reason.code + " " + r.reason.message))`)
	calls := p.Calls()
	require.Len(t, calls, 5)
	answers := map[string]ptcx.Answer{}
	for i, c := range calls {
		require.Equal(t, ptcx.ParkedApproval, c.Kind)
		if i%2 == 0 {
			answers[c.ID] = ptcx.Approve()
		} else {
			var a sendArgs
			require.NoError(t, json.Unmarshal(c.Args, &a))
			answers[c.ID] = ptcx.Decline("not " + a.To)
		}
	}
	r, next := p.Resume(context.Background(), answers)
	require.Nil(t, next)
	var got []string
	require.NoError(t, json.Unmarshal([]byte(r.Text), &got))
	require.Len(t, got, 5)
	for i, g := range got {
		to := string(rune('a' + i))
		if i%2 == 0 {
			require.Equal(t, "sent "+to, g)
		} else {
			require.Equal(t, "DENIED rejected by the approver: not "+to, g)
		}
	}
	require.Equal(t, 3, w.ranOf("send"))
}

func TestParked_none(t *testing.T) {
	ctx := context.Background()
	for name, p := range map[string]*ptcx.Parked{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			require.Empty(t, p.ExecutionID())
			require.Nil(t, p.Calls())
			r, next := p.Resume(ctx, map[string]ptcx.Answer{"x": ptcx.Approve()})
			require.Nil(t, next)
			require.ErrorIs(t, r.AsError(), api.ErrInternal)
			require.Contains(t, r.Text, "or is none")
			require.ErrorIs(t, p.Discard(ctx).AsError(), api.ErrInternal)
			require.False(t, p.Release())
			_, err := p.Marshal()
			require.ErrorContains(t, err, "nothing left to marshal")
		})
	}
}

// An answer the tool could not have given is checked as its body's
// output is: the program gets the failure, nothing panics.
func TestParked_Resume_answerThatIsNotTheToolsOutput(t *testing.T) {
	w := &parkWorld{}
	h := newParkHost(t, w)
	code := `try { return await tools.ask_user({q: "?"}) } catch (e) { return e.code }`
	for _, tc := range []struct {
		name  string
		value string
		want  string
	}{
		{"not JSON", `{"open`, "INVALID_TOOL_OUTPUT"},
		{"not the output schema's type", `42`, "INVALID_TOOL_OUTPUT"},
		{"its type", `"fine"`, "fine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPark(t, h, "c-"+strings.ReplaceAll(tc.name, " ", "-"), code)
			r, next := p.Resume(context.Background(), map[string]ptcx.Answer{only(t, p).ID: {Output: ptcx.Output{Value: json.RawMessage(tc.value)}}})
			require.Nil(t, next)
			require.Equal(t, tc.want, r.Text)
		})
	}
	require.Zero(t, w.ranOf("ask_user"))
}

// WithParkedApprovals replaces WithExecutor's approver, whichever comes
// first.
func TestWithParkedApprovals_replacesTheExecutorsApprover(t *testing.T) {
	yes := executor.NewConfig().WithApprover(executor.ApproverFunc(func(context.Context, executor.Request, string) (executor.Approval, string, error) {
		return executor.ApproveOnce, "", nil
	}))
	for name, opts := range map[string][]ptcx.Option{
		"after":  {ptcx.WithExecutor(yes), ptcx.WithParkedApprovals()},
		"before": {ptcx.WithParkedApprovals(), ptcx.WithExecutor(yes)},
	} {
		t.Run(name, func(t *testing.T) {
			w := &parkWorld{}
			h := newSandboxHost(t, append(opts, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(w.tools()...))...)
			p := mustPark(t, h, "c1", sendAfterCount)
			require.Equal(t, ptcx.ParkedApproval, only(t, p).Kind)
			require.Equal(t, api.KindAbort, p.Discard(context.Background()).Err.Kind)
			require.Zero(t, w.ranOf("send"))
		})
	}
}
