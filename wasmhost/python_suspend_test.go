package wasmhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/wasmhost"
)

// pySuspendProgram draws from random before and after each of its awaits,
// so that a resumed run that did not continue the world's draws differs.
const pySuspendProgram = `import random
draws = [random.random()]
s = 0
for i in range(3):
    s = await tools.add(a=s, b=i)
    draws.append(random.random())
print('sum', s)
[s, draws]`

func pySuspend(code string, when func(wasmhost.Quiescence) bool) wasmhost.Program {
	return wasmhost.Program{JS: code, Language: api.LanguagePython, Tools: suspendTools,
		World: &wasmhost.World{Seed: 7, Start: time.Unix(1_700_000_000, 0)}, Suspend: when}
}

// A Python run suspended at each of its awaits and resumed, each time on
// a Runtime that has not run Python yet, gives what it gives straight:
// its result, logs, and random draws (its generator's state is in its
// memory, as QuickJS's Math.random is).
func TestPython_Resume_equalsStraight(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	rt := newRuntime(t, testConfig())
	straight, err := rt.Run(ctx, pySuspend(pySuspendProgram, nil), &recordingTools{})
	require.NoError(t, err)
	require.Equal(t, []string{"sum 3"}, straight.Logs)

	out, err := rt.Run(ctx, pySuspend(pySuspendProgram, always), &recordingTools{})
	require.NoError(t, err)
	steps := 0
	for out.Suspended != nil {
		steps++
		require.LessOrEqual(t, steps, 10)
		fresh := newRuntime(t, testConfig()) // its Python Runtime is made by the snapshot (Resume)
		out, err = fresh.Resume(ctx, out.Suspended.Snapshot, &recordingTools{}, wasmhost.Resumption{Suspend: always})
		require.NoError(t, err)
	}
	require.Equal(t, 3, steps, "suspended at each await")
	require.JSONEq(t, string(straight.Result), string(out.Result))
	require.Equal(t, straight.Logs, out.Logs)
}

// A suspended Python run's pending calls are answered by the resumption,
// as a client tool's result is.
func TestPython_Resume_resultsAnswer(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	rt := newRuntime(t, testConfig())
	d := &recordingTools{}
	out, err := rt.Run(ctx, pySuspend(`import asyncio
a, b = await asyncio.gather(tools.echo(x=1), tools.add(a=1, b=2))
[a, b]`, always), d)
	require.NoError(t, err)
	require.NotNil(t, out.Suspended)
	require.Len(t, out.Suspended.Calls, 2)
	_, err = rt.Resume(ctx, out.Suspended.Snapshot, d, wasmhost.Resumption{Limits: api.Limits{MemoryBytes: 16 << 20}})
	require.ErrorContains(t, err, "a memory limit of 16 MiB is below the 32 MiB a Python program needs")
	out, err = rt.Resume(ctx, out.Suspended.Snapshot, d, wasmhost.Resumption{
		Results: map[int32]wasmhost.CallResult{1: {OK: true, Value: json.RawMessage(`"from the client"`)}}})
	require.NoError(t, err)
	require.JSONEq(t, `["from the client", 3]`, string(out.Result))
	require.Equal(t, []string{`add {"a":1,"b":2}`}, d.log(), "the answered call is not dispatched")
}

// A Python run idle past SuspendIdle is suspended there and resumed
// attached, as a TypeScript one is.
func TestPython_Resume_idle(t *testing.T) {
	requirePython(t)
	rt := newRuntime(t, testConfig())
	p := pySuspend(`r = await tools.slow(n=1)
r['n'] + 1`, idleOnly)
	p.SuspendIdle = time.Millisecond
	d := &recordingTools{}
	out, err := rt.Run(context.Background(), p, d)
	out, err, n := resumeIdle(rt, out, err, d, wasmhost.Resumption{Suspend: idleOnly, SuspendIdle: p.SuspendIdle})
	require.NoError(t, err)
	require.Equal(t, 1, n, "suspended once, while the slow call ran")
	require.JSONEq(t, "2", string(out.Result))
}

// A Python session keeps __main__'s globals from program to program, live,
// suspended to bytes, and exported into another Runtime, which continues
// it in Python; a session's programs are of one language.
func TestPython_Session(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	require.Equal(t, api.Language(""), s.Language())
	run := func(rt *wasmhost.Runtime, s *wasmhost.Session, code string) string {
		t.Helper()
		p := pyProgram(code)
		p.Session = s
		out, err := rt.Run(ctx, p, &tools{})
		require.NoError(t, err)
		return string(out.Result)
	}
	require.Equal(t, "", run(rt, s, "import json\nitems = [1, 2]\ndef total(): return sum(items)"))
	require.Equal(t, api.LanguagePython, s.Language())
	require.Equal(t, wasmhost.SessionLive, s.State())
	require.Equal(t, "3", run(rt, s, "items.append(0)\ntotal()"))

	_, err := s.Suspend(ctx)
	require.NoError(t, err)
	require.Equal(t, wasmhost.SessionSuspended, s.State())
	require.Equal(t, "4", run(rt, s, "items.append(1)\ntotal()"))

	_, err = rt.Run(ctx, wasmhost.Program{JS: "return 1", Session: s}, &tools{})
	require.ErrorContains(t, err, "a TypeScript program cannot run in a session of Python programs")

	b, err := s.Export(ctx)
	require.NoError(t, err)
	other := newRuntime(t, testConfig())
	imported, err := other.ImportSession(ctx, b)
	require.NoError(t, err)
	require.Equal(t, api.LanguagePython, imported.Language())
	require.JSONEq(t, `"[1, 2, 0, 1]"`, run(other, imported, "json.dumps(items)"))
	require.Equal(t, "5", run(other, imported, "items.append(1)\ntotal()"))

	// Each program of the session draws from the world's random source, as
	// a run of its own does (ptcx_next reseeds random).
	seeded := func(s *wasmhost.Session) string {
		p := pyProgram("import random\n[random.random(), random.randint(0, 1 << 30)]")
		p.World, p.Session = &wasmhost.World{Seed: 5}, s
		out, err := other.Run(ctx, p, &tools{})
		require.NoError(t, err)
		return string(out.Result)
	}
	alone := seeded(nil)
	require.Equal(t, alone, seeded(imported))
	require.Equal(t, alone, seeded(imported), "and again in the next program")

	ts := newSession(t, rt)
	out, err := rt.Run(ctx, wasmhost.Program{JS: "globalThis.x = 1; return 1", Session: ts}, &tools{})
	require.NoError(t, err, "%s", out.Result)
	p := pyProgram("1")
	p.Session = ts
	_, err = rt.Run(ctx, p, &tools{})
	require.ErrorContains(t, err, "a Python program cannot run in a session of TypeScript programs")
}

// A file a Python session's program left open stays open, at its offset,
// in the session's next programs: across a suspension to bytes and an
// export imported by another Runtime (the session's bytes carry the file
// table, format 2).
func TestPython_Session_filesCarried(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	run := func(rt *wasmhost.Runtime, s *wasmhost.Session, code string) string {
		t.Helper()
		p := pyProgram(code)
		p.Session = s
		out, err := rt.Run(ctx, p, &tools{})
		require.NoError(t, err)
		return string(out.Result)
	}
	zip := python.StdlibMount + "/" + python.StdlibZip
	require.Equal(t, `"PK"`, run(rt, s, "f = open('"+zip+"', 'rb', buffering=0)\nf.read(2).decode()"))
	_, err := s.Suspend(ctx)
	require.NoError(t, err)
	require.Equal(t, `[2,"\u0003\u0004"]`, run(rt, s, "[f.tell(), f.read(2).decode()]"))

	b, err := s.Export(ctx)
	require.NoError(t, err)
	other := newRuntime(t, testConfig())
	imported, err := other.ImportSession(ctx, b)
	require.NoError(t, err)
	require.Equal(t, `[4,4]`, run(other, imported, "[f.tell(), len(f.read(4))]"))
	require.Equal(t, "null", run(other, imported, "f.close()"))
}

// Bytes of a Python session or run on a build without the Python guest are
// refused, saying they are another guest's.
func TestPython_bytesWithoutPython(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	p := pyProgram("x = 1")
	p.Session = s
	_, err := rt.Run(ctx, p, &tools{})
	require.NoError(t, err)
	b, err := s.Export(ctx)
	require.NoError(t, err)
	out, err := rt.Run(ctx, pySuspend("await tools.echo(x=1)", always), &recordingTools{})
	require.NoError(t, err)
	require.NotNil(t, out.Suspended)

	restore := wasmhost.WithoutPython()
	defer restore()
	bare := newRuntime(t, testConfig())
	_, err = bare.ImportSession(ctx, b)
	require.ErrorIs(t, err, wasmhost.ErrSessionBytes)
	require.ErrorContains(t, err, "made by another guest")
	_, err = bare.Resume(ctx, out.Suspended.Snapshot, &recordingTools{}, wasmhost.Resumption{})
	require.ErrorIs(t, err, wasmhost.ErrSnapshot)
	require.ErrorContains(t, err, "resume it with the guest that suspended it")
}

// BenchmarkLanguages_suspendResume suspends a run at its one call and
// resumes it with the call's answer, in each language on one Runtime:
// the cost of parking a run for a client tool, less the store. It
// reports the snapshot's size.
func BenchmarkLanguages_suspendResume(b *testing.B) {
	if python.Wasm() == nil {
		b.Skipf("skipped: %v", wasmhost.ErrNoPython)
	}
	rt := newRuntime(b, testConfig())
	ctx := context.Background()
	require.NoError(b, rt.Prepare(ctx, api.LanguagePython))
	answer := map[int32]wasmhost.CallResult{1: {OK: true, Value: json.RawMessage(`{"x":1}`)}}
	for _, tc := range []struct {
		name string
		p    wasmhost.Program
	}{
		{"typescript", wasmhost.Program{JS: "const r = await tools.echo({x: 1}); return r.x + 1", Tools: suspendTools, Suspend: always}},
		{"python", wasmhost.Program{JS: "r = await tools.echo(x=1)\nr['x'] + 1", Language: api.LanguagePython, Tools: suspendTools, Suspend: always}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			size := 0
			for b.Loop() {
				out, err := rt.Run(ctx, tc.p, &recordingTools{})
				if err != nil || out.Suspended == nil {
					b.Fatal(err, out.Suspended)
				}
				size = len(out.Suspended.Snapshot)
				if out, err = rt.Resume(ctx, out.Suspended.Snapshot, &recordingTools{}, wasmhost.Resumption{Results: answer}); err != nil || string(out.Result) != "2" {
					b.Fatal(err, string(out.Result))
				}
			}
			b.ReportMetric(float64(size), "snapshot-bytes")
		})
	}
}

// A call made at the end of a long export, with only the event loop's
// wind-down after it, is still held at the quiescent point that follows,
// so a caller may park it: the calls a run holds are started a couple of
// polls after the first of them was made, not from the export's second
// poll on (a Python program's first export compiles it and polls a few
// times before its first call). The sweep shifts where the meter's polls
// fall against the call; the recycled instance keeps the countdown of its
// earlier runs, which shifts it too.
func TestPython_Suspend_lateCallStaysHeld(t *testing.T) {
	requirePython(t)
	ctx := context.Background()
	rt := newRuntime(t, testConfig())
	for n := 0; n < 40_000; n += 1_700 {
		var states []wasmhost.CallState
		when := func(q wasmhost.Quiescence) bool {
			for _, c := range q.Calls {
				states = append(states, c.State)
			}
			return true
		}
		code := fmt.Sprintf("s = 0\nfor i in range(%d):\n    s += i\nawait tools.echo(x=s)", n)
		out, err := rt.Run(ctx, pySuspend(code, when), &recordingTools{})
		require.NoError(t, err, "n=%d", n)
		require.NotNil(t, out.Suspended, "n=%d", n)
		require.Equal(t, []wasmhost.CallState{wasmhost.CallHeld}, states, "n=%d: the call is held at the quiescent point", n)
	}
}
