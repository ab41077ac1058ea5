package executor_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// parkedInWorld parks a program that made one nested call before it came
// to wait on approve, and returns its bytes with the parked value.
func parkedInWorld(t *testing.T, w *parkWorld) (*executor.Parked, []byte) {
	t.Helper()
	call := runCodeCall(`
		const before = await tools.add({});
		console.log("asking");
		const ok = await tools.approve({what: "deploy"});
		const after = await tools.add({});
		return {before, ok, after, r: Math.random() < 2};`)
	res, parked := w.ex.ExecuteParkable(context.Background(), call, isApprove)
	require.NotNil(t, parked, "not parked: %+v", res)
	b, err := parked.Marshal()
	require.NoError(t, err)
	return parked, b
}

func TestParked_Marshal_restoresInAnotherExecutor(t *testing.T) {
	a, b := newParkWorld(t), newParkWorld(t)
	ctx := context.Background()
	parked, data := parkedInWorld(t, a)

	_, err := b.ex.RestoreParked(data)
	require.ErrorIs(t, err, executor.ErrParkedTaken, "the state is held by the Parked that made it")
	require.True(t, parked.Release(), "its process gives it up (as one that stops would)")
	require.False(t, parked.Release(), "once")
	require.False(t, executor.TokenOfParked(parked).Live())
	require.Empty(t, a.notified()[1:], "a released execution is not finished: only its first nested call was notified")

	restored, err := b.ex.RestoreParked(data)
	require.NoError(t, err)
	require.Equal(t, parked.Calls(), restored.Calls())
	require.Equal(t, parked.CallID(2), restored.CallID(2))
	require.Equal(t, "", restored.CallID(1), "call 1 was answered before the park")
	callID := restored.CallID(2)
	require.True(t, executor.TokenOfParked(restored).Live(), "a fresh live token for the same execution")

	_, err = b.ex.RestoreParked(data)
	require.ErrorIs(t, err, executor.ErrParkedTaken, "restored twice in one process")

	res, again := restored.Resume(ctx, map[int32]executor.Answer{2: {Output: api.Output{Value: json.RawMessage(`"yes"`)}}})
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	require.Equal(t, []string{"asking"}, v.Logs, "the logs of the whole run")
	require.JSONEq(t, `{"before": 42, "ok": "yes", "after": 42, "r": true}`, string(v.Result))
	require.Equal(t, 3, res.Ledger.Stats.Calls, "the ledger so far came along")
	require.Len(t, res.Ledger.Calls, 3)
	require.Equal(t, "add", res.Ledger.Calls[0].Tool)
	require.Equal(t, callID, b.notes[0].Request.ID, "the resumed call has the ID CallID said")
	require.Equal(t, []string{"nested approve", "nested add", "run_code"}, b.notified(),
		"the resumed calls are nested calls of the same execution in the restoring executor")
	require.Equal(t, map[string]int{"add": 1}, b.ran)
	require.False(t, executor.TokenOfParked(restored).Live())

	_, err = b.ex.RestoreParked(data)
	require.ErrorIs(t, err, executor.ErrParkedTaken, "a resumed state never completes again here")
	_, err = restored.Marshal()
	require.ErrorContains(t, err, "already resumed")
}

func TestParked_Marshal_keepsTheExecutionID(t *testing.T) {
	a, b := newParkWorld(t), newParkWorld(t)
	args, _ := json.Marshal(map[string]string{"code": `return await tools.approve({what: "x"});`})
	_, parked := a.ex.ExecuteParkable(context.Background(), executor.Call{ID: "exec_1", Name: "run_code", Args: args}, isApprove)
	require.NotNil(t, parked)
	data, err := parked.Marshal()
	require.NoError(t, err)
	parked.Discard(context.Background())
	restored, err := b.ex.RestoreParked(data)
	require.NoError(t, err)
	res, _ := restored.Resume(context.Background(), map[int32]executor.Answer{1: {Err: api.Errorf(api.CodeToolFailed, "no")}})
	require.Equal(t, "exec_1", res.ID)
	require.Equal(t, api.CodeCodeRunFailed, res.Err.Code, "the program did not catch its call's failure")
	require.Contains(t, res.Err.Message, "no")
}

func TestExecutor_RestoreParked_incompatible(t *testing.T) {
	a := newParkWorld(t)
	parked, data := parkedInWorld(t, a)
	defer parked.Discard(context.Background())
	body := func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(1) }
	approve := registry.Tool{Name: "approve", Description: "Ask a human.", Body: body}
	add := registry.Tool{Name: "add", Description: "Add.", Body: body}
	tests := []struct {
		name  string
		mode  api.Mode
		tools []registry.Tool
		want  string
	}{
		{"mode changed", api.ModeBoth, []registry.Tool{approve, add}, `now in mode "both", and it was parked in mode "ptc"`},
		{"bound tool gone", api.ModePTC, []registry.Tool{approve}, `the tool "add" it was bound to is no longer bindable`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registry.New()
			require.NoError(t, reg.DeclareMode(registry.Deployment, tt.mode))
			for _, tool := range tt.tools {
				require.NoError(t, reg.Register(registry.Deployment, tool))
			}
			ex, err := executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(t)))
			require.NoError(t, err)
			_, err = ex.RestoreParked(data)
			require.ErrorIs(t, err, executor.ErrParkedIncompatible)
			require.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("scope gone", func(t *testing.T) {
		reg := registry.New()
		require.NoError(t, reg.NewScope("agent", registry.Deployment))
		require.NoError(t, reg.DeclareMode("agent", api.ModePTC))
		require.NoError(t, reg.Register("agent", approve))
		src, err := executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(t)))
		require.NoError(t, err)
		call := runCodeCall(`return await tools.approve({});`)
		call.Scope = "agent"
		_, p := src.ExecuteParkable(context.Background(), call, isApprove)
		require.NotNil(t, p)
		defer p.Discard(context.Background())
		b, err := p.Marshal()
		require.NoError(t, err)
		_, err = a.ex.RestoreParked(b)
		require.ErrorIs(t, err, executor.ErrParkedIncompatible)
		require.ErrorContains(t, err, `its scope "agent"`)
	})
	t.Run("no resuming runtime", func(t *testing.T) {
		ex, err := executor.New(registry.New(), executor.NewConfig())
		require.NoError(t, err)
		_, err = ex.RestoreParked(data)
		require.ErrorIs(t, err, executor.ErrParkedIncompatible)
		require.ErrorContains(t, err, "cannot resume runs")
	})
}

func TestExecutor_RestoreParked_badBytes(t *testing.T) {
	w := newParkWorld(t)
	parked, data := parkedInWorld(t, w)
	defer parked.Discard(context.Background())
	hlen := int(binary.BigEndian.Uint32(data[12:]))
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(data)) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"a prefix of the magic", data[:4], "truncated"},
		{"another format", []byte("PK\x03\x04 a zip file, not a parked execution"), "does not start with"},
		{"fixed fields cut", data[:20], "truncated"},
		{"header cut", data[:30], "its header claims"},
		{"snapshot cut", data[:len(data)-100], "its snapshot claims"},
		{"checksum cut", data[:len(data)-2], "its snapshot claims"},
		{"trailing bytes", append(bytes.Clone(data), 0), "1 bytes follow its end"},
		{"another version", edit(func(b []byte) []byte { b[11] = 3; return b }), "format version 3"},
		{"header over its bound", edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[12:], executor.MaxParkedHeaderBytes+1)
			return b
		}), "over MaxParkedHeaderBytes"},
		{"a flipped bit in the snapshot", edit(func(b []byte) []byte { b[len(b)-10] ^= 1; return b }), "corrupt"},
		{"a flipped bit in the header", edit(func(b []byte) []byte { b[16+hlen/2] ^= 1; return b }), "corrupt"},
		{"a header that is not JSON", executor.AssembleParked([]byte("{nope"), nil), "header is not valid"},
		{"a header of unknown fields", executor.AssembleParked([]byte(`{"surprise":1}`), nil), "unknown field"},
		{"a header without calls", executor.AssembleParked([]byte(`{"id":"x","scope":"s","tool":"run_code","args":{},"mode":"ptc","nonce":"n","limits":{}}`), nil), "no call is waited on"},
		{"a header of a mode without run_code", executor.AssembleParked([]byte(`{"id":"x","scope":"s","tool":"run_code","args":{},"mode":"native","nonce":"n","limits":{}}`), nil), `its mode "native" is not one with run_code`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.ex.RestoreParked(tt.data)
			require.ErrorIs(t, err, executor.ErrParkedFormat)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestDecodeParked_sizeBound(t *testing.T) {
	w := newParkWorld(t)
	parked, data := parkedInWorld(t, w)
	defer parked.Discard(context.Background())
	n := int64(len(data))
	require.NoError(t, executor.DecodeParked(data, n+1), "below the bound")
	require.NoError(t, executor.DecodeParked(data, n), "at the bound")
	err := executor.DecodeParked(data, n-1)
	require.ErrorIs(t, err, executor.ErrParkedFormat, "past the bound")
	require.ErrorContains(t, err, "over this executor's limit")
}

func TestDecodeParked_headerBound(t *testing.T) {
	w := newParkWorld(t)
	parked, data := parkedInWorld(t, w)
	defer parked.Discard(context.Background())
	hlen := int(binary.BigEndian.Uint32(data[12:]))
	header, snap := data[16:16+hlen], data[16+hlen+8:len(data)-4]
	padded := func(size int) []byte { // JSON allows whitespace after the value
		return append(bytes.Clone(header), strings.Repeat(" ", size-len(header))...)
	}
	require.NoError(t, executor.DecodeParked(executor.AssembleParked(padded(executor.MaxParkedHeaderBytes-1), snap), 1<<30), "below")
	require.NoError(t, executor.DecodeParked(executor.AssembleParked(padded(executor.MaxParkedHeaderBytes), snap), 1<<30), "at")
	err := executor.DecodeParked(executor.AssembleParked(padded(executor.MaxParkedHeaderBytes+1), snap), 1<<30)
	require.ErrorIs(t, err, executor.ErrParkedFormat, "past")
	require.ErrorContains(t, err, "over MaxParkedHeaderBytes")
}

// TestExecutor_RestoreParked_onAnotherRuntime resumes the bytes on a
// sandbox of its own, as another process would: nothing but the bytes
// crosses over.
func TestExecutor_RestoreParked_onAnotherRuntime(t *testing.T) {
	a := newParkWorld(t)
	parked, data := parkedInWorld(t, a)
	require.True(t, parked.Release())

	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithMaxRuns(1))
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close(context.Background())) }()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	body := func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(7) }
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "approve", Description: "Ask a human.", Body: body}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "add", Description: "Add.", Body: body}))
	ex, err := executor.New(reg, executor.NewConfig().WithRuntime(rt))
	require.NoError(t, err)
	restored, err := ex.RestoreParked(data)
	require.NoError(t, err)
	res, again := restored.Resume(context.Background(), map[int32]executor.Answer{2: {Output: api.Output{Value: json.RawMessage(`"ok"`)}}})
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	require.JSONEq(t, `{"before": 42, "ok": "ok", "after": 7, "r": true}`, string(v.Result), "before the park from the first world, after it from this one")
}

// TestParked_Resume_busyLeavesItParked resumes on a sandbox whose one run
// is taken: BUSY, nothing ran, and the Parked comes back as it was, to
// resume once there is room, with the same answers and result.
func TestParked_Resume_busyLeavesItParked(t *testing.T) {
	a := newParkWorld(t)
	parked, data := parkedInWorld(t, a)
	require.True(t, parked.Release())

	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithMaxRuns(1).WithAdmissionWait(0))
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close(context.Background())) }()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	hold, held := make(chan struct{}), make(chan struct{})
	body := func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(7) }
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "approve", Description: "Ask a human.", Body: body}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "add", Description: "Add.", Body: body}))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "hold", Description: "Hold the sandbox's one run.",
		Body: func(context.Context, api.Input) (api.Output, error) { close(held); <-hold; return api.ValueOutput(0) }}))
	var notes []string
	var mu sync.Mutex
	ex, err := executor.New(reg, executor.NewConfig().WithRuntime(rt).WithOnResult(func(n executor.Notification) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, n.Request.Tool)
	}))
	require.NoError(t, err)
	holder := make(chan api.Result, 1)
	go func() { holder <- ex.Execute(context.Background(), runCodeCall(`return await tools.hold({})`)) }()
	<-held

	restored, err := ex.RestoreParked(data)
	require.NoError(t, err)
	answers := map[int32]executor.Answer{2: {Output: api.Output{Value: json.RawMessage(`"ok"`)}}}
	res, again := restored.Resume(context.Background(), answers)
	require.Same(t, restored, again, "BUSY: the same Parked comes back")
	require.NotNil(t, res.Err)
	require.Equal(t, api.CodeBusy, res.Err.Code)
	require.True(t, executor.TokenOfParked(restored).Live(), "still parked: its token lives")
	_, err = ex.RestoreParked(data)
	require.ErrorIs(t, err, executor.ErrParkedTaken, "its state is still held by the Parked")
	mu.Lock()
	require.Empty(t, notes, "nothing finished, nothing notified")
	mu.Unlock()
	b, err := restored.Marshal()
	require.NoError(t, err, "still marshallable")
	require.NotEmpty(t, b)

	close(hold)
	require.True(t, (<-holder).OK())
	res, again = restored.Resume(context.Background(), answers)
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	require.JSONEq(t, `{"before": 42, "ok": "ok", "after": 7, "r": true}`, string(v.Result))
	require.Equal(t, 3, res.Ledger.Stats.Calls, "the ledger came along through the BUSY attempt")
	require.False(t, executor.TokenOfParked(restored).Live())
	_, again = restored.Resume(context.Background(), answers)
	require.Nil(t, again, "resumed once")
}

// TestExecutor_RestoreParked_headerDisagreesWithItsSnapshot reframes a real
// snapshot under headers that name other calls or tools than it holds (a
// file corrupted, or crafted, with a right checksum): each is refused
// before anything runs, saying what differs.
func TestExecutor_RestoreParked_headerDisagreesWithItsSnapshot(t *testing.T) {
	w := newParkWorld(t)
	parked, data := parkedInWorld(t, w)
	defer parked.Discard(context.Background())
	hlen := int(binary.BigEndian.Uint32(data[12:]))
	header, snap := data[16:16+hlen], data[16+hlen+8:len(data)-4]
	reframe := func(edit func(h map[string]any)) []byte {
		var h map[string]any
		require.NoError(t, json.Unmarshal(header, &h))
		edit(h)
		b, err := json.Marshal(h)
		require.NoError(t, err)
		return executor.AssembleParked(b, snap)
	}
	call := func(h map[string]any) map[string]any { return h["calls"].([]any)[0].(map[string]any) }
	tests := []struct {
		name string
		edit func(h map[string]any)
		want string
	}{
		{"another call id", func(h map[string]any) { call(h)["id"] = 3 }, "waiting call 1 is call 3 in the header and call 2 in the snapshot"},
		{"another tool", func(h map[string]any) { call(h)["name"] = "add" }, `call 2 is of tool "add" in the header and of "approve" in the snapshot`},
		{"other arguments", func(h map[string]any) { call(h)["args"] = map[string]any{"what": "rm -rf"} }, "call 2's arguments differ"},
		{"dispatched, says the header", func(h map[string]any) { call(h)["dispatched"] = true }, "call 2 is held in the snapshot"},
		{"a call more", func(h map[string]any) {
			h["calls"] = append(h["calls"].([]any), map[string]any{"id": 9, "name": "approve"})
		}, "the header names 2 waiting calls, the snapshot holds 1"},
		{"other tools bound", func(h map[string]any) { h["tools"] = []any{"approve"} }, `the header binds tools ["approve"], the snapshot ["add" "approve"]`},
		{"another mode", func(h map[string]any) { h["mode"] = "native" }, `its mode "native" is not one with run_code`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.ex.RestoreParked(reframe(tt.edit))
			require.ErrorIs(t, err, executor.ErrParkedFormat)
			require.ErrorContains(t, err, tt.want)
		})
	}
	require.NoError(t, executor.DecodeParked(reframe(func(map[string]any) {}), 1<<30), "the header as it was agrees")
}

// TestExecutor_RestoreParked_underAnotherMode: an execution parked in ptc
// mode is refused by an executor whose scope is now native (run_code does
// not exist there) or both: the collapse it ran under holds across a park.
func TestExecutor_RestoreParked_underAnotherMode(t *testing.T) {
	a := newParkWorld(t)
	parked, data := parkedInWorld(t, a)
	defer parked.Discard(context.Background())
	body := func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(1) }
	for _, mode := range []api.Mode{api.ModeNative, api.ModeBoth} {
		t.Run(string(mode), func(t *testing.T) {
			reg := registry.New()
			require.NoError(t, reg.DeclareMode(registry.Deployment, mode))
			require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "approve", Description: "Ask a human.", Body: body}))
			require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "add", Description: "Add.", Body: body}))
			ex, err := executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(t)))
			require.NoError(t, err)
			_, err = ex.RestoreParked(data)
			require.ErrorIs(t, err, executor.ErrParkedIncompatible)
			require.ErrorContains(t, err, `now in mode "`+string(mode)+`", and it was parked in mode "ptc"`)
		})
	}
}
