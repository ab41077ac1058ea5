package ptcx_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
)

func TestHost_Plan(t *testing.T) {
	h := newHost(t, ptcx.WithTools(addTool), ptcx.WithMode(ptcx.ModePTC))
	p, err := h.Plan("", "const x = await tools.add({a: 1, b: 2})\nfor (const b of [1, 2]) await tools.add({a: x, b})")
	require.NoError(t, err)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	low := `{"integrity": "trusted", "confidentiality": "public"}`
	require.JSONEq(t, `{"hash": "`+p.Hash+`", "dynamic": false, "tools": ["add"], "calls": [
		{"tool": "add", "args": {"a": 1, "b": 2}, "computed": [], "repeats": false, "line": 1, "labels": `+low+`},
		{"tool": "add", "args": {}, "computed": ["a", "b"], "repeats": true, "line": 2, "labels": `+low+`}],
		"labels": `+low+`, "rules": {"add": {}}, "cost": 0}`, string(b))

	_, err = h.Plan("", "return (")
	require.Equal(t, api.CodeCodeRunFailed, api.CodeOf(err))
	require.NoError(t, h.Close(context.Background()))
	_, err = h.Plan("", "return 1")
	require.ErrorIs(t, err, ptcx.ErrClosed)
}

func TestHost_Execute_planBound(t *testing.T) {
	var sent int
	mail := ptcx.Tool{Name: "send_email", Description: "Send.", Body: func(context.Context, ptcx.Input) (ptcx.Output, error) {
		sent++
		return api.ValueOutput("sent")
	}}
	h := newSandboxHost(t, ptcx.WithTools(addTool, mail), ptcx.WithMode(ptcx.ModePTC))
	code := "const s = await tools.add({a: 1, b: 2})\ntry { await tools.send_email({to: 'x'}) } catch (e: any) { return [s, e.code] }\nreturn [s]"
	p, err := h.Plan("", code)
	require.NoError(t, err)
	require.Equal(t, []string{"add", "send_email"}, p.Tools)
	p.Tools = []string{"add"}
	c := runCode("c1", code)
	c.Plan = p
	r := h.Execute(context.Background(), c)
	require.True(t, r.OK(), "%+v", r.Err)
	require.JSONEq(t, `{"logs": [], "result": [3, "DENIED"]}`, string(r.Value))
	require.Zero(t, sent)

	other := runCode("c2", "return 1")
	other.Plan = p
	r = h.Execute(context.Background(), other)
	require.Equal(t, api.CodeDenied, r.Err.Code)
}
