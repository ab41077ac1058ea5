package ptcx_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/testkit"
)

// agentBlocks are the ten feeds of Monty's agent workload
// (pydantic/monty, scripts/startup_performance.py, AGENT_BLOCKS): each
// builds on the globals of those before it, as a REPL's do.
var agentBlocks = []string{
	"orders = [{'sku': 'A1', 'qty': 2, 'price': 3.5}, {'sku': 'B2', 'qty': 1, 'price': 12.0}, {'sku': 'C3', 'qty': 5, 'price': 1.0}]",
	"def line_total(o):\n    return o['qty'] * o['price']",
	"totals = [line_total(o) for o in orders]",
	"grand = sum(totals)",
	"biggest = max(orders, key=line_total)['sku']",
	"import json\nsummary = json.dumps({'orders': len(orders), 'grand': grand, 'biggest': biggest})",
	"discount = 0.1 if grand > 10 else 0",
	"net = round(grand * (1 - discount), 2)",
	"report = f'{len(orders)} orders, total {net}, biggest {biggest}'",
	"print(report)",
}

// pyValueOf decodes a run_code result's logs and value.
func pyValueOf(t *testing.T, r ptcx.Result) ([]string, string) {
	t.Helper()
	require.Nil(t, r.Err, "%v", r.Err)
	var v struct {
		Logs   []string
		Result json.RawMessage
	}
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return v.Logs, string(v.Result)
}

// Monty's agent workload, its ten feeds in one Python session of the
// front door (ptcx.WithSessions), prints its report; the session's
// globals are there for a later call, and a TypeScript program in it is
// refused naming both languages.
func TestHost_Execute_pythonSession(t *testing.T) {
	testkit.RequirePython(t)
	h := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool), ptcx.WithSessions(ptcx.SessionLimits{}),
		ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython))
	t.Cleanup(func() { closedOK(t)(h.CloseSession(context.Background(), "", "agent")) })
	in := func(code string) ptcx.Call {
		c := pythonCall("", code)
		c.Session = "agent"
		return c
	}
	var logs []string
	for i, block := range agentBlocks {
		l, _ := pyValueOf(t, h.Execute(context.Background(), in(block)))
		if i < len(agentBlocks)-1 {
			require.Empty(t, l, "feed %d", i)
		}
		logs = l
	}
	require.Equal(t, []string{"3 orders, total 21.6, biggest B2"}, logs)

	_, v := pyValueOf(t, h.Execute(context.Background(), in("json.loads(summary)['grand'] + await tools.add(a=1, b=2)")))
	require.JSONEq(t, `27`, v, "the globals, json among them, are there for a later program, which calls tools")

	ts := runCode("", "return 1")
	ts.Session = "agent"
	r := h.Execute(context.Background(), ts)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Contains(t, r.Err.Message, `session "agent" runs Python programs, and this program is TypeScript`)
}

// sendAfterCountPython is sendAfterCount in Python.
const sendAfterCountPython = `n = await tools.count()
try:
    r = [n, await tools.send(to="bob")]
except ToolCallError as e:
    r = [n, e.code, str(e)]
r`

// A Python program parks for an approval (ptcx.WithParkedApprovals) and
// for a tool that answers later (ptcx.WithParkedTools); its bytes
// restore on another host, which resumes it to its end.
func TestHost_ExecuteParkable_python(t *testing.T) {
	testkit.RequirePython(t)
	ctx := context.Background()
	python := ptcx.WithLanguages(ptcx.LanguageTypeScript, ptcx.LanguagePython)
	wa, wb := &parkWorld{}, &parkWorld{}
	a, b := newParkHost(t, wa, python), newParkHost(t, wb, python)

	r, p := a.ExecuteParkable(ctx, pythonCall("c1", sendAfterCountPython))
	require.NotNil(t, p, "the program did not park: %s %v", r.Text, r.Err)
	c := only(t, p)
	require.Equal(t, ptcx.ParkedApproval, c.Kind)
	require.Equal(t, "send", c.Tool)
	r, next := p.Resume(ctx, map[string]ptcx.Answer{c.ID: ptcx.Approve()})
	require.Nil(t, next)
	_, v := pyValueOf(t, r)
	require.JSONEq(t, `[1, "sent bob"]`, v)
	require.Equal(t, 1, wa.ranOf("count"), "the program continued where it stopped")

	r, p = a.ExecuteParkable(ctx, pythonCall("c2", `who = await tools.inbox()
s = await tools.send(to=who)
[s, await tools.ask_user(q="ok?")]`))
	require.NotNil(t, p, "the program did not park: %s %v", r.Text, r.Err)
	data, err := p.Marshal()
	require.NoError(t, err)
	require.True(t, p.Release())
	q, err := b.RestoreParked(data)
	require.NoError(t, err)
	r, next = q.Resume(ctx, map[string]ptcx.Answer{only(t, q).ID: ptcx.Approve()})
	require.NotNil(t, next, "ask_user parks it again, on b: %v", r.Err)
	c = only(t, next)
	require.Equal(t, ptcx.ParkedTool, c.Kind)
	out, err := api.ValueOutput("sure")
	require.NoError(t, err)
	r, next = next.Resume(ctx, map[string]ptcx.Answer{c.ID: {Output: out}})
	require.Nil(t, next)
	_, v = pyValueOf(t, r)
	require.JSONEq(t, `["sent mallory", "sure"]`, v)
	require.Equal(t, map[string]int{"send": 1}, wb.ran, "after it parked, on b")
}
