package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// suspendAt runs js with Suspend returning true at the first point where
// when says so, and returns the suspension.
func suspendAt(t *testing.T, rt *wasmhost.Runtime, js string, limits api.Limits, d wasmhost.Dispatcher,
	when func(wasmhost.Quiescence) bool) *wasmhost.Suspended {
	t.Helper()
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: suspendTools, Limits: limits, Suspend: when}, d)
	require.NoError(t, err)
	require.NotNil(t, out.Suspended, "the run was not suspended: %s", out.Result)
	require.Empty(t, out.Logs)
	require.Nil(t, out.Result)
	return out.Suspended
}

func always(wasmhost.Quiescence) bool { return true }

func TestRuntime_Run_suspendShowsThePendingCalls(t *testing.T) {
	rt := sharedRuntime(t)
	var seen wasmhost.Quiescence
	s := suspendAt(t, rt, `return await Promise.all([tools.echo({a: 1}), tools.add({a: 1, b: 2}), new Promise(r => setTimeout(r, 50))]);`,
		api.Limits{}, &recordingTools{}, func(q wasmhost.Quiescence) bool { seen = q; return true })
	want := []wasmhost.PendingCall{
		{ID: 1, Name: "echo", Args: json.RawMessage(`{"a":1}`), State: wasmhost.CallHeld},
		{ID: 2, Name: "add", Args: json.RawMessage(`{"a":1,"b":2}`), State: wasmhost.CallHeld},
	}
	require.NotNil(t, seen.Yield)
	seen.Yield = nil
	require.Equal(t, wasmhost.Quiescence{Calls: want, Timers: 1}, seen)
	require.Equal(t, want, s.Calls)
	require.Greater(t, len(s.Snapshot), s.RawBytes, "stored: the body and its header")
	compressed, err := wasmhost.CompressSnapshot(s.Snapshot)
	require.NoError(t, err)
	require.Greater(t, s.RawBytes, len(compressed))
	t.Logf("a small program's snapshot: %d bytes raw, %d compressed", s.RawBytes, len(compressed))
}

// A Suspend that waits gives the run's guest slot to other runs first
// (Quiescence.Yield): with one slot, another run completes while it waits,
// and the run goes on once it answers false.
func TestRuntime_Run_suspendYieldsTheSlot(t *testing.T) {
	rt := newRuntime(t, testConfig().WithGuestSlots(1))
	var other string
	when := func(q wasmhost.Quiescence) bool {
		q.Yield()
		q.Yield() // harmless twice
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := rt.Run(ctx, wasmhost.Program{JS: `return 1 + 1`}, &recordingTools{})
		if err == nil {
			other = string(out.Result)
		}
		return false
	}
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: `return await tools.echo({a: 1})`, Tools: suspendTools, Suspend: when},
		&recordingTools{})
	require.NoError(t, err)
	require.Nil(t, out.Suspended)
	require.NotNil(t, out.Result)
	require.JSONEq(t, `{"a":1}`, string(out.Result))
	require.Equal(t, "2", other, "the other run had the slot while the first one's Suspend waited")
}

func TestRuntime_Resume_resultsAnswerPendingCalls(t *testing.T) {
	rt := sharedRuntime(t)
	tools := &recordingTools{}
	s := suspendAt(t, rt, `const [a, b] = await Promise.all([tools.echo({a: 1}), tools.add({a: 1, b: 2})]); return [a, b];`,
		api.Limits{}, tools, always)
	out, err := rt.Resume(context.Background(), s.Snapshot, tools, wasmhost.Resumption{
		Results: map[int32]wasmhost.CallResult{1: {OK: true, Value: json.RawMessage(`"from the client"`)}}})
	require.NoError(t, err)
	require.JSONEq(t, `["from the client", 3]`, string(out.Result))
	require.Equal(t, []string{`add {"a":1,"b":2}`}, tools.log(), "the answered call is not dispatched")
	require.Equal(t, 2, out.Stats.Calls)

	_, err = rt.Resume(context.Background(), s.Snapshot, tools, wasmhost.Resumption{
		Results: map[int32]wasmhost.CallResult{3: {OK: true}}})
	require.ErrorIs(t, err, wasmhost.ErrSnapshot)
	require.ErrorContains(t, err, "answers call 3, which the run does not wait on")
}

// A resumed run suspended again writes its snapshot into
// Resumption.SnapshotBuffer, even the bytes it resumed from, and that
// snapshot resumes as one in a new buffer does.
func TestRuntime_Resume_suspendsAgainIntoTheBuffer(t *testing.T) {
	rt := sharedRuntime(t)
	js := `let s = 0; for (let i = 0; i < 4; i++) s = await tools.add({a: s, b: i}); return s;`
	s := suspendAt(t, rt, js, api.Limits{}, &recordingTools{}, always)
	buf := s.Snapshot
	for step := 0; ; step++ {
		out, err := rt.Resume(context.Background(), buf, &recordingTools{}, wasmhost.Resumption{Suspend: always, SnapshotBuffer: buf})
		require.NoError(t, err)
		if out.Suspended == nil {
			require.JSONEq(t, `6`, string(out.Result))
			require.Equal(t, 3, step, "suspended again at each call after the first")
			return
		}
		if len(out.Suspended.Snapshot) <= cap(buf) {
			require.Same(t, &buf[:1][0], &out.Suspended.Snapshot[0], "step %d: written into the bytes it resumed from", step)
		}
		buf = out.Suspended.Snapshot
	}
}

func TestRuntime_Resume_dispatchedCallIsDispatchedAgain(t *testing.T) {
	rt := sharedRuntime(t)
	first := &recordingTools{}
	js := `const [, v] = await Promise.all([tools.echo({}), tools.slow({n: 1})]); return v;`
	s := suspendAt(t, rt, js, api.Limits{}, first, func(q wasmhost.Quiescence) bool {
		return len(q.Calls) == 1 && q.Calls[0].State == wasmhost.CallDispatched
	})
	require.Equal(t, []wasmhost.PendingCall{{ID: 2, Name: "slow", Args: json.RawMessage(`{"n":1}`),
		State: wasmhost.CallDispatched}}, s.Calls)
	second := &recordingTools{}
	out, err := rt.Resume(context.Background(), s.Snapshot, second, wasmhost.Resumption{})
	require.NoError(t, err)
	require.JSONEq(t, `{"n":1}`, string(out.Result))
	require.Equal(t, []string{`slow {"n":1}`}, second.log())
}

func TestRuntime_Resume_budgetsCarryOver(t *testing.T) {
	rt := sharedRuntime(t)
	ctx := context.Background()
	limits := api.Limits{WallTime: 1500 * time.Millisecond}
	sleepThenCall := `await new Promise(r => setTimeout(r, 300)); console.log("slept"); return await tools.echo({});`
	atCall := func(q wasmhost.Quiescence) bool { return len(q.Calls) == 1 }
	s := suspendAt(t, rt, sleepThenCall, limits, &recordingTools{}, atCall)
	time.Sleep(1600 * time.Millisecond) // longer than the wall limit: time suspended does not count
	out, err := rt.Resume(ctx, s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
	require.NoError(t, err)
	require.Equal(t, []string{"slept"}, out.Logs)
	require.GreaterOrEqual(t, out.Stats.Wall, 300*time.Millisecond)
	require.Less(t, out.Stats.Wall, 1500*time.Millisecond)
	require.Equal(t, 1, out.Stats.Calls)

	// The wall time used before the suspension counts after it.
	tooLong := `await new Promise(r => setTimeout(r, 300)); await tools.echo({}); await new Promise(r => setTimeout(r, 1300)); return 1;`
	s = suspendAt(t, rt, tooLong, limits, &recordingTools{}, atCall)
	_, err = rt.Resume(ctx, s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindTimeout, re.Kind)

	// The timer left is re-armed with what was left of its delay.
	timerLeft := `const t0 = Date.now(); await Promise.all([tools.echo({}), new Promise(r => setTimeout(r, 400))]); return Date.now() - t0;`
	s = suspendAt(t, rt, timerLeft, api.Limits{}, &recordingTools{}, atCall)
	out, err = rt.Resume(ctx, s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
	require.NoError(t, err)
	var waited float64
	require.NoError(t, json.Unmarshal(out.Result, &waited))
	require.GreaterOrEqual(t, waited, 400.0)

	// Lower limits at resumption apply; the compute time used counts.
	s = suspendAt(t, rt, `let x = 0; for (let i = 0; i < 3e6; i++) x += i; await tools.echo({}); return x;`,
		api.Limits{}, &recordingTools{}, atCall)
	out, err = rt.Resume(ctx, s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
	require.NoError(t, err)
	require.Positive(t, out.Stats.Compute)
	_, err = rt.Resume(ctx, s.Snapshot, &recordingTools{}, wasmhost.Resumption{Limits: api.Limits{ComputeTime: time.Nanosecond}})
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindTimeout, re.Kind)
}

func TestRuntime_Resume_refusesOtherRuntimesAndCorruptBytes(t *testing.T) {
	rt := sharedRuntime(t)
	s := suspendAt(t, rt, `return await tools.echo({v: "abc"});`, api.Limits{}, &recordingTools{}, always)
	good := s.Snapshot
	edit := func(at int, b ...byte) []byte {
		c := append([]byte(nil), good...)
		copy(c[at:], b)
		return c
	}
	cases := []struct {
		name string
		b    []byte
		msg  string
	}{
		{"empty", nil, "not a ptcx snapshot"},
		{"other bytes", []byte("hello, this is not a snapshot at all, not at all, no, not one bit of it"), "not a ptcx snapshot"},
		{"a later format", edit(8, 5, 0), "format version 5, this host reads versions 1 to 4"},
		{"no format", edit(8, 0, 0), "format version 0, this host reads versions 1 to 4"},
		{"other ABI", edit(10, 9, 0), "guest ABI version 9, this host speaks version 3"},
		{"other guest", edit(12, good[12]^1), "made by guest module"},
		{"other image", edit(44, good[44]^1), "made from initialised image"},
		{"cut in the header", good[:80], "header is cut short"},
		{"cut in the body", good[:len(good)-10], "not the"},
		{"a flipped byte of the index", edit(len(good)-20, good[len(good)-20]^0x40), "its header, table or index is corrupt"},
		{"a flipped byte of the compressed body", func() []byte {
			c, err := wasmhost.CompressSnapshot(good)
			require.NoError(t, err)
			c[len(c)-20] ^= 0x40
			return c
		}(), "its body cannot be inflated"},
		{"an unknown codec", edit(77+int(good[76]), 7), "its body's codec 7 is unknown"},
		{"more declared than allowed", edit(78+int(good[76]), 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0), "over the"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.Resume(context.Background(), tc.b, &recordingTools{}, wasmhost.Resumption{})
			require.ErrorIs(t, err, wasmhost.ErrSnapshot)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	compressed, err := wasmhost.CompressSnapshot(good)
	require.NoError(t, err)
	for _, b := range [][]byte{good, compressed} {
		out, err := rt.Resume(context.Background(), b, &recordingTools{}, wasmhost.Resumption{})
		require.NoError(t, err, "the good snapshot still resumes, stored and compressed")
		require.JSONEq(t, `{"v":"abc"}`, string(out.Result))
	}
	requireHealthy(t, rt)
}

func TestRuntime_Run_suspendNeedsTheImage(t *testing.T) {
	rt := newRuntime(t, testConfig().WithImage(false))
	_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return 1`, Suspend: always}, &recordingTools{})
	require.ErrorContains(t, err, "need the Runtime's initialised image")
	_, err = rt.Resume(context.Background(), []byte("x"), &recordingTools{}, wasmhost.Resumption{})
	require.ErrorContains(t, err, "need the Runtime's initialised image")
}

func TestRuntime_Run_suspendNeverAskedIsAnOrdinaryRun(t *testing.T) {
	rt := sharedRuntime(t)
	asked := 0
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: `console.log(1); return await tools.echo({x: 2})`,
		Tools: suspendTools, Suspend: func(wasmhost.Quiescence) bool { asked++; return false }}, &recordingTools{})
	require.NoError(t, err)
	require.Nil(t, out.Suspended)
	require.Equal(t, []string{"1"}, out.Logs)
	require.JSONEq(t, `{"x":2}`, string(out.Result))
	require.Equal(t, 1, asked)
}

func TestRuntime_Run_suspendThatPanicsEndsTheRun(t *testing.T) {
	rt := sharedRuntime(t)
	_, err := rt.Run(context.Background(), wasmhost.Program{JS: `return await tools.echo({})`, Tools: suspendTools,
		Suspend: func(wasmhost.Quiescence) bool { panic("hook") }}, &recordingTools{})
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindTrap, re.Kind)
	require.Equal(t, "the host failed at a quiescent point", re.Message)
	require.ErrorContains(t, re.Cause, "Program.Suspend panicked: hook")
	requireHealthy(t, rt)
}
