package wasmhost_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost"
)

const envelope = `{"ref": "0123456789abcdef0123456789abcdef", "size": 5, "labels": {"integrity": "untrusted", "confidentiality": "private"}, "tool": "doc"}`

// handleTools answers doc with a handle (CallResult.Handle) and shaped
// with a value of the same shape, and $handle (a read) with "hello".
type handleTools struct{ recordingTools }

func (t *handleTools) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	switch name {
	case "doc":
		done(wasmhost.CallResult{OK: true, Handle: true, Value: json.RawMessage(envelope)})
	case "shaped":
		done(wasmhost.CallResult{OK: true, Value: json.RawMessage(envelope)})
	case wasmhost.HandleCall:
		t.recordingTools.Dispatch("echo", args, func(wasmhost.CallResult) {})
		done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`"hello"`)})
	default:
		t.recordingTools.Dispatch(name, args, done)
	}
}

var handleToolNames = []string{"doc", "shaped", "echo"}

// TestRuntime_Run_handle: an answer flagged Handle reaches the program as
// a Handle object (ABI 3, ptcx_resume's ok 2); a value of the same shape
// stays a value; text() is the reserved read, which the host accepts
// though no tool has the name; a handle in arguments is sent as its
// marker.
func TestRuntime_Run_handle(t *testing.T) {
	rt := sharedRuntime(t)
	tools := &handleTools{}
	out, err := rt.Run(context.Background(), wasmhost.Program{Tools: handleToolNames, JS: `
		const h = await tools.doc({}); const v = await tools.shaped({});
		await tools.echo({deep: [{h}]});
		return {keys: Object.keys(h), size: h.size, tool: h.tool, labels: h.labels, text: await h.text(),
			value: typeof v.text, ref: v.ref, isFrozen: Object.isFrozen(h), "in": "ref" in h};`}, tools)
	require.NoError(t, err)
	require.JSONEq(t, `{"keys": ["size", "labels", "tool"], "size": 5, "tool": "doc",
		"labels": {"integrity": "untrusted", "confidentiality": "private"}, "text": "hello",
		"value": "undefined", "ref": "0123456789abcdef0123456789abcdef", "isFrozen": true, "in": false}`, string(out.Result))
	require.Equal(t, []string{
		`echo {"deep":[{"h":{"$ptcx.handle":"0123456789abcdef0123456789abcdef"}}]}`,
		`echo {"ref":"0123456789abcdef0123456789abcdef","as":"text"}`,
	}, tools.log())
}

// TestRuntime_Resume_handleAnswerSurvives: a handle answered and not yet
// delivered when the run is suspended is a handle after the resume (the
// snapshot's table keeps the flag).
func TestRuntime_Resume_handleAnswerSurvives(t *testing.T) {
	rt := sharedRuntime(t)
	js := `const [a, b] = await Promise.all([tools.doc({}), tools.doc({})]); return [typeof a.json, typeof b.json, b.size];`
	answered := func(q wasmhost.Quiescence) bool {
		for _, c := range q.Calls {
			if c.State == wasmhost.CallAnswered {
				return true
			}
		}
		return false
	}
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: handleToolNames, Suspend: answered}, &handleTools{})
	require.NoError(t, err)
	require.NotNil(t, out.Suspended, "suspended with an answer not yet delivered")
	out, err = rt.Resume(context.Background(), out.Suspended.Snapshot, &handleTools{}, wasmhost.Resumption{})
	require.NoError(t, err)
	require.JSONEq(t, `["function", "function", 5]`, string(out.Result))

	// And one given as a Resumption's result.
	out, err = rt.Run(context.Background(), wasmhost.Program{JS: `const h = await tools.shaped({}); return typeof h.text;`,
		Tools: handleToolNames, Suspend: func(wasmhost.Quiescence) bool { return true }}, &handleTools{})
	require.NoError(t, err)
	require.NotNil(t, out.Suspended)
	out, err = rt.Resume(context.Background(), out.Suspended.Snapshot, &handleTools{}, wasmhost.Resumption{
		Results: map[int32]wasmhost.CallResult{1: {OK: true, Handle: true, Value: json.RawMessage(envelope)}}})
	require.NoError(t, err)
	require.JSONEq(t, `"function"`, string(out.Result), "the host's flag, not the tool, makes a handle")
}
