package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// testGrace is the idle-park grace of these tests: shorter than serve's,
// so that they park soon.
const testGrace = 30 * time.Millisecond

// idleWorld is a ptc registry whose tools a test controls, on a sandbox of
// its own: slow waits until the test opens its gate ({"gate": name}) or
// its context ends, and returns {"v": v}; nap sleeps {"ms": n} (and fails
// for n < 0); excl is
// exclusive and returns at once; approve answers later (a client's tool)
// and returns "approve's body". Each counts its bodies.
type idleWorld struct {
	reg *registry.Registry
	rt  *wasmhost.Runtime

	mu    sync.Mutex
	gates map[string]chan struct{}
	ran   map[string]int
}

func newIdleWorld(t testing.TB, cfg wasmhost.Config) *idleWorld {
	t.Helper()
	rt, err := wasmhost.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	w := &idleWorld{rt: rt, gates: map[string]chan struct{}{}, ran: map[string]int{}}
	count := func(name string) {
		w.mu.Lock()
		w.ran[name]++
		w.mu.Unlock()
	}
	slow := func(ctx context.Context, in api.Input) (api.Output, error) {
		count("slow")
		var a struct {
			Gate string
			V    any
		}
		_ = json.Unmarshal(in.Args, &a)
		select {
		case <-w.gate(a.Gate):
			return api.ValueOutput(map[string]any{"v": a.V})
		case <-ctx.Done():
			return api.Output{}, ctx.Err()
		}
	}
	nap := func(ctx context.Context, in api.Input) (api.Output, error) {
		count("nap")
		var a struct{ MS int }
		_ = json.Unmarshal(in.Args, &a)
		if a.MS < 0 {
			return api.Output{}, fmt.Errorf("a nap of %d ms", a.MS)
		}
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return api.ValueOutput(a.MS)
		case <-ctx.Done():
			return api.Output{}, ctx.Err()
		}
	}
	w.reg = ptcRegistry(t,
		registry.Tool{Name: "slow", Description: "Wait for the test.", ConcurrencySafe: true, Body: slow},
		registry.Tool{Name: "nap", Description: "Sleep.", ConcurrencySafe: true, Body: nap},
		registry.Tool{Name: "excl", Description: "Run alone.", Body: func(context.Context, api.Input) (api.Output, error) {
			count("excl")
			return api.ValueOutput("excl")
		}},
		registry.Tool{Name: "approve", Description: "Ask a human.", ConcurrencySafe: true, Body: func(context.Context, api.Input) (api.Output, error) {
			count("approve")
			return api.ValueOutput("approve's body")
		}},
	)
	return w
}

// gate returns the gate name, made on first use.
func (w *idleWorld) gate(name string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.gates[name]
	if g == nil {
		g = make(chan struct{})
		w.gates[name] = g
	}
	return g
}

func (w *idleWorld) open(name string) { close(w.gate(name)) }

func (w *idleWorld) bodies(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ran[name]
}

// executor returns an executor on w's sandbox, parking idle runs after
// grace (0: never), with rec recording its result notifications.
func (w *idleWorld) executor(t testing.TB, grace time.Duration, rec *notes, cfg executor.Config) *executor.Executor {
	t.Helper()
	cfg = cfg.WithRuntime(w.rt).WithParkIdle(grace)
	if rec != nil {
		cfg = cfg.WithOnResult(rec.add)
	}
	ex, err := executor.New(w.reg, cfg)
	require.NoError(t, err)
	return ex
}

// notes records result notifications.
type notes struct {
	mu   sync.Mutex
	list []executor.Notification
}

func (n *notes) add(x executor.Notification) {
	n.mu.Lock()
	n.list = append(n.list, x)
	n.mu.Unlock()
}

// atTheEnd are the two messages of a call stopped as its run reaches its
// wall deadline: whether the nested calls' deadline or the run's failure
// stops it first is a race (live too), which idle parking does not decide.
var atTheEnd = strings.NewReplacer(
	"was cancelled while it ran", "was stopped as the run ended",
	"was stopped while it ran: the program reached its wall time limit", "was stopped as the run ended")

// summary is what must not depend on idle parking: each notification's
// tool, code, kind and message, its place in the completion order, and
// the ledger's calls and counts.
func (n *notes) summary() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, x := range n.list {
		s := fmt.Sprintf("%s seq %d", x.Request.Tool, x.Seq)
		if x.Request.Nested {
			s = "nested " + s
		}
		if r := x.Result; r.Err != nil {
			s += fmt.Sprintf(" %s %s %q", r.Err.Code, r.Err.Kind, atTheEnd.Replace(r.Err.Message))
		} else {
			s += " " + string(r.Value)
		}
		if l := x.Result.Ledger; l != nil {
			s += fmt.Sprintf(" ledger: %d calls, %d omitted, memory %d:", l.Stats.Calls, l.Omitted, l.Stats.MemoryBytes)
			for _, c := range l.Calls {
				s += fmt.Sprintf(" %s %s %q", c.Tool, c.Code, c.Args)
			}
		}
		out = append(out, s)
	}
	return out
}

// runInfo returns the run_code notification's RunInfo.
func (n *notes) runInfo(t testing.TB) *executor.RunInfo {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range n.list {
		if x.Request.Tool == registry.RunCode {
			require.NotNil(t, x.Run)
			return x.Run
		}
	}
	t.Fatal("no run_code notification")
	return nil
}

func codeCall(code string, limits map[string]int) executor.Call {
	args := map[string]any{"code": code, "description": "test"}
	if limits != nil {
		args["limits"] = limits
	}
	b, _ := json.Marshal(args)
	return executor.Call{Name: registry.RunCode, Args: b}
}

// async runs f on a goroutine of its own and returns where its result
// arrives.
func async(f func() api.Result) <-chan api.Result {
	ch := make(chan api.Result, 1)
	go func() { ch <- f() }()
	return ch
}

func result(t testing.TB, ch <-chan api.Result) api.Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the call never returned")
		return api.Result{}
	}
}

func runValue(t testing.TB, r api.Result) executor.RunCodeValue {
	t.Helper()
	require.True(t, r.OK(), "%+v", r.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return v
}

func TestNew_parkIdle(t *testing.T) {
	reg := ptcRegistry(t)
	_, err := executor.New(reg, executor.NewConfig().WithParkIdle(-time.Millisecond))
	require.ErrorContains(t, err, "an idle-park grace of -1ms is negative")
	noResume := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		return wasmhost.Outcome{}, nil
	})
	_, err = executor.New(reg, executor.NewConfig().WithRuntime(noResume).WithParkIdle(time.Millisecond))
	require.ErrorContains(t, err, "WithParkIdle needs a code runtime that can resume runs")
	_, err = executor.New(reg, executor.NewConfig().WithRuntime(noResume))
	require.NoError(t, err, "without idle parking, any code runtime")
	_, err = executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(t)).WithParkIdle(executor.ParkIdleGrace))
	require.NoError(t, err)
}

// A program awaiting a timer is parked while it waits: its memory limit is
// no longer committed; its timer fires when it was due, not a delay after
// the resume.
func TestExecutor_Execute_parkIdle_timer(t *testing.T) {
	const sleep = 2 * time.Second
	w := newIdleWorld(t, wasmhost.NewConfig())
	rec := &notes{}
	ex := w.executor(t, testGrace, rec, executor.NewConfig())
	start := time.Now()
	ch := async(func() api.Result {
		return ex.Execute(context.Background(), codeCall(fmt.Sprintf(`
			const t0 = Date.now();
			console.log("sleeping");
			await new Promise(r => setTimeout(r, %d));
			return Date.now() - t0;`, sleep.Milliseconds()), nil))
	})
	waitFor(t, "the run parks", func() bool { return ex.IdleParkStats().Parked == 1 })
	u := w.rt.Usage()
	require.Zero(t, u.Runs, "parked: no run admitted")
	require.Zero(t, u.CommittedBytes, "its memory limit is no longer committed")
	require.Positive(t, u.SuspendedBytes, "its snapshot is charged instead")
	require.Less(t, u.SuspendedBytes, w.rt.Limits().MemoryBytes/8)

	v := runValue(t, result(t, ch))
	took := time.Since(start)
	require.Equal(t, []string{"sleeping"}, v.Logs)
	var slept int64
	require.NoError(t, json.Unmarshal(v.Result, &slept))
	require.GreaterOrEqual(t, slept, sleep.Milliseconds(), "the timer waited its delay")
	// Counted from the park, the timer would fire its delay after the
	// resume, about 2 s later than this.
	require.Less(t, took, sleep+sleep*3/4, "the timer fired when it was due, not its delay after the resume")
	info := rec.runInfo(t)
	require.Equal(t, 1, info.IdleParks)
	require.Greater(t, info.IdleParked, sleep/2)
	require.GreaterOrEqual(t, info.Stats.Wall, sleep, "the wall time counts the time parked")
	require.Equal(t, executor.IdleParkStats{Parks: 1}, ex.IdleParkStats())
	u = w.rt.Usage()
	require.Zero(t, u.SuspendedBytes)
	require.Zero(t, u.CommittedBytes)
}

// A program awaiting a slow server-side body is parked while the body
// runs; the body runs once and the program gets its value. With two calls
// in flight, the first answer wakes it and the second answers the resumed
// run.
func TestExecutor_Execute_parkIdle_callsInFlight(t *testing.T) {
	w := newIdleWorld(t, wasmhost.NewConfig())
	ex := w.executor(t, testGrace, nil, executor.NewConfig())
	ch := async(func() api.Result {
		return ex.Execute(context.Background(), codeCall(`
			const a = tools.slow({gate: "a", v: 1}), b = tools.slow({gate: "b", v: 2});
			const x = await a;
			console.log("a answered");
			const y = await b;
			return [x.v, y.v];`, nil))
	})
	waitFor(t, "parked with both bodies running", func() bool {
		return ex.IdleParkStats().Parked == 1 && w.bodies("slow") == 2
	})
	require.Zero(t, w.rt.Usage().CommittedBytes)
	w.open("a")
	waitFor(t, "woken by the first answer, then parked again on the second call", func() bool {
		return ex.IdleParkStats().Parks == 2 && ex.IdleParkStats().Parked == 1
	})
	w.open("b")
	v := runValue(t, result(t, ch))
	require.JSONEq(t, `[1, 2]`, string(v.Result))
	require.Equal(t, []string{"a answered"}, v.Logs)
	require.Equal(t, 2, w.bodies("slow"), "each body ran once: nothing was dispatched again")
	require.Zero(t, ex.IdleParkStats().Parked)
}

// A program awaiting one slow call runs it on the inline path (the
// sandbox's goroutine), and is still parked while the body runs: the run
// is handed over at its idle point.
func TestExecutor_Execute_parkIdle_inlineCall(t *testing.T) {
	w := newIdleWorld(t, wasmhost.NewConfig())
	ex := w.executor(t, testGrace, nil, executor.NewConfig())
	var inline sync.Map
	defer executor.SetInlineHook(func(r executor.Request) { inline.Store(r.Tool, true) })()
	ch := async(func() api.Result {
		return ex.Execute(context.Background(), codeCall(`return (await tools.slow({gate: "g", v: 7})).v;`, nil))
	})
	waitFor(t, "parked while the body runs", func() bool { return ex.IdleParkStats().Parked == 1 && w.bodies("slow") == 1 })
	require.Zero(t, w.rt.Usage().CommittedBytes)
	w.open("g")
	require.JSONEq(t, `7`, string(runValue(t, result(t, ch)).Result))
	_, ok := inline.Load("slow")
	require.True(t, ok, "the call took the inline path")
	require.Equal(t, 1, w.bodies("slow"))
}

// Fifty runs awaiting a timer under a committed-memory cap that fits four
// at their limit all complete with idle parking; without it the fifth is
// refused BUSY.
func TestExecutor_Execute_parkIdle_manyRunsShareTheCap(t *testing.T) {
	const limit = 16 << 20
	cfg := wasmhost.NewConfig().WithLimits(api.Limits{MemoryBytes: limit}).WithMaxCommittedMemory(4 * limit).WithAdmissionWait(2 * time.Second)
	program := codeCall(`await new Promise(r => setTimeout(r, 4000)); return "woke";`, nil)

	t.Run("parking off: the fifth is refused", func(t *testing.T) {
		w := newIdleWorld(t, cfg)
		ex := w.executor(t, 0, nil, executor.NewConfig())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var chs []<-chan api.Result
		for range 4 {
			chs = append(chs, async(func() api.Result { return ex.Execute(ctx, program) }))
		}
		waitFor(t, "four runs admitted", func() bool { return w.rt.Usage().Runs == 4 })
		r := ex.Execute(ctx, program)
		require.NotNil(t, r.Err)
		require.Equal(t, api.CodeBusy, r.Err.Code, "%s", r.Err.Message)
		cancel()
		for _, ch := range chs {
			require.Equal(t, api.CodeCodeRunFailed, result(t, ch).Err.Code)
		}
	})
	t.Run("parking on: all complete", func(t *testing.T) {
		w := newIdleWorld(t, cfg)
		ex := w.executor(t, testGrace, nil, executor.NewConfig())
		var chs []<-chan api.Result
		for range 50 {
			chs = append(chs, async(func() api.Result { return ex.Execute(context.Background(), program) }))
		}
		waitFor(t, "many parked at once", func() bool { return ex.IdleParkStats().Parked > 4 })
		for _, ch := range chs {
			require.JSONEq(t, `"woke"`, string(runValue(t, result(t, ch)).Result))
		}
		require.GreaterOrEqual(t, ex.IdleParkStats().Parks, int64(50))
		require.Zero(t, w.rt.Usage().SuspendedBytes)
	})
}

// scenario is one program run with idle parking on and off, whose
// notifications and ledger must be the same.
type scenario struct {
	name string
	code string
	// limits are run_code's; drive, when set, runs beside the call (it may
	// cancel it) and is given the executor's world.
	limits map[string]int
	drive  func(w *idleWorld, ex *executor.Executor, cancel context.CancelFunc)
	check  func(t *testing.T, r api.Result, w *idleWorld)
}

func (sc scenario) run(t *testing.T, grace time.Duration) (api.Result, []string, *idleWorld, *executor.Executor) {
	w := newIdleWorld(t, wasmhost.NewConfig())
	rec := &notes{}
	ex := w.executor(t, grace, rec, executor.NewConfig())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := async(func() api.Result { return ex.Execute(ctx, codeCall(sc.code, sc.limits)) })
	if sc.drive != nil {
		sc.drive(w, ex, cancel)
	}
	r := result(t, ch)
	if sc.check != nil {
		sc.check(t, r, w)
	}
	return r, rec.summary(), w, ex
}

// Ending while parked, an exclusive call queued at the park, and the
// ledger and notifications: the same as a live run's.
func TestExecutor_Execute_parkIdle_sameAsLive(t *testing.T) {
	parked := func(w *idleWorld, ex *executor.Executor) bool {
		// With parking off, a run that waits is "parked" as soon as its
		// bodies run: there is nothing else to wait for.
		return ex.IdleParkStats().Parked == 1 || (ex.IdleParkStats().Parks == 0 && w.bodies("slow") > 0)
	}
	scenarios := []scenario{
		{name: "cancelled while parked, a call in flight", code: `
			console.log("waiting");
			return await tools.slow({gate: "never"});`,
			drive: func(w *idleWorld, ex *executor.Executor, cancel context.CancelFunc) {
				for !parked(w, ex) {
					time.Sleep(2 * time.Millisecond)
				}
				time.Sleep(2 * testGrace)
				cancel()
			},
			check: func(t *testing.T, r api.Result, _ *idleWorld) {
				require.Equal(t, api.CodeCodeRunFailed, r.Err.Code)
				require.Equal(t, api.KindAbort, r.Err.Kind)
				require.Equal(t, []string{"waiting"}, r.Err.Logs)
			}},
		{name: "wall limit reached while parked, a call in flight", code: `
			console.log("waiting");
			const p = tools.slow({gate: "never"});
			await new Promise(r => setTimeout(r, 10000));
			return await p;`, limits: map[string]int{"wall_ms": 600},
			check: func(t *testing.T, r api.Result, _ *idleWorld) {
				require.Equal(t, api.CodeCodeRunFailed, r.Err.Code)
				require.Equal(t, api.KindTimeout, r.Err.Kind)
				require.Contains(t, r.Err.Message, "the program exceeded its wall time limit of 600ms")
				require.Equal(t, []string{"waiting"}, r.Err.Logs)
			}},
		{name: "an exclusive call queued behind one in flight", code: `
			const a = tools.slow({gate: "a", v: "slow"}), b = tools.excl({});
			return [(await a).v, await b];`,
			drive: func(w *idleWorld, ex *executor.Executor, _ context.CancelFunc) {
				for !parked(w, ex) {
					time.Sleep(2 * time.Millisecond)
				}
				time.Sleep(2 * testGrace)
				w.open("a")
			},
			check: func(t *testing.T, r api.Result, w *idleWorld) {
				require.JSONEq(t, `["slow", "excl"]`, string(runValue(t, r).Result))
				require.Equal(t, 1, w.bodies("excl"), "run once, not abandoned")
			}},
		{name: "calls, timers and failures", code: `
			const out = [];
			const [a, b] = await Promise.all([tools.nap({ms: 150}), tools.nap({ms: 400})]);
			out.push(a, b);
			await new Promise(r => setTimeout(r, 150));
			try { await tools.nap({ms: -1}); } catch (e) { out.push(e.code); }
			out.push(await tools.excl({}));
			const c = await Promise.race([tools.nap({ms: 900}), new Promise(r => setTimeout(() => r("timer"), 100))]);
			out.push(c);
			out.push(await tools.nap({ms: 150}));
			return out;`,
			check: func(t *testing.T, r api.Result, _ *idleWorld) {
				require.JSONEq(t, `[150, 400, "TOOL_FAILED", "excl", "timer", 150]`, string(runValue(t, r).Result))
			}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			liveRes, live, _, _ := sc.run(t, 0)
			parkedRes, got, _, ex := sc.run(t, testGrace)
			require.Positive(t, ex.IdleParkStats().Parks, "the run was idle-parked")
			require.Equal(t, live, got)
			if liveRes.Err != nil {
				require.Equal(t, liveRes.Err.Message, parkedRes.Err.Message)
			}
		})
	}
}

// A resume the sandbox has no room for is retried until there is.
func TestExecutor_Execute_parkIdle_busyResumeIsRetried(t *testing.T) {
	w := newIdleWorld(t, wasmhost.NewConfig().WithMaxRuns(1).WithAdmissionWait(0))
	ex := w.executor(t, testGrace, nil, executor.NewConfig())
	live := w.executor(t, 0, nil, executor.NewConfig())
	ch := async(func() api.Result {
		return ex.Execute(context.Background(), codeCall(`await new Promise(r => setTimeout(r, 300)); return "resumed";`, nil))
	})
	waitFor(t, "parked", func() bool { return ex.IdleParkStats().Parked == 1 })
	other := async(func() api.Result {
		return live.Execute(context.Background(), codeCall(`return (await tools.slow({gate: "other", v: "other"})).v;`, nil))
	})
	waitFor(t, "the other run holds the sandbox", func() bool { return w.bodies("slow") == 1 })
	waitFor(t, "the resume refused and retried", func() bool { return ex.IdleParkStats().Retries >= 2 })
	w.open("other")
	require.JSONEq(t, `"other"`, string(runValue(t, result(t, other)).Result))
	require.JSONEq(t, `"resumed"`, string(runValue(t, result(t, ch)).Result))
}

// A resume that never finds room fails at the wall deadline as a timeout.
func TestExecutor_Execute_parkIdle_busyUntilTheWallDeadline(t *testing.T) {
	w := newIdleWorld(t, wasmhost.NewConfig().WithMaxRuns(1).WithAdmissionWait(0))
	ex := w.executor(t, testGrace, nil, executor.NewConfig())
	live := w.executor(t, 0, nil, executor.NewConfig())
	ch := async(func() api.Result {
		return ex.Execute(context.Background(), codeCall(`console.log("before"); await new Promise(r => setTimeout(r, 100)); return 1;`,
			map[string]int{"wall_ms": 700}))
	})
	waitFor(t, "parked", func() bool { return ex.IdleParkStats().Parked == 1 })
	other := async(func() api.Result {
		return live.Execute(context.Background(), codeCall(`return (await tools.slow({gate: "other", v: 1})).v;`, nil))
	})
	r := result(t, ch)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeCodeRunFailed, r.Err.Code)
	require.Equal(t, api.KindTimeout, r.Err.Kind)
	require.Equal(t, []string{"before"}, r.Err.Logs)
	require.Positive(t, ex.IdleParkStats().Retries)
	w.open("other")
	runValue(t, result(t, other))
	require.Zero(t, w.rt.Usage().SuspendedBytes)
}

// A run parked when the sandbox closes ends as a live run would.
func TestExecutor_Execute_parkIdle_closedWhileParked(t *testing.T) {
	w := newIdleWorld(t, wasmhost.NewConfig())
	ex := w.executor(t, testGrace, nil, executor.NewConfig())
	ch := async(func() api.Result {
		return ex.Execute(context.Background(), codeCall(`console.log("before"); await new Promise(r => setTimeout(r, 20000));`, nil))
	})
	waitFor(t, "parked", func() bool { return ex.IdleParkStats().Parked == 1 })
	require.NoError(t, w.rt.Close(context.Background()))
	r := result(t, ch)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeCodeRunFailed, r.Err.Code)
	require.Equal(t, api.KindAbort, r.Err.Kind)
	require.Contains(t, r.Err.Message, "the runtime was closed")
	require.Equal(t, []string{"before"}, r.Err.Logs)
}

// A session's program is never parked.
func TestExecutor_Execute_parkIdle_sessionsNeverPark(t *testing.T) {
	w := newIdleWorld(t, wasmhost.NewConfig())
	ex := w.executor(t, testGrace, nil, executor.NewConfig())
	call := codeCall(`await new Promise(r => setTimeout(r, 200)); return (await tools.nap({ms: 200}));`, nil)
	call.Session = "s"
	v := runValue(t, ex.Execute(context.Background(), call))
	require.JSONEq(t, `200`, string(v.Result))
	require.Zero(t, ex.IdleParkStats().Parks)
}

// ExecuteParkable parks idle runs inside, and hands its caller a Parked
// only when every call the program waits on is held: never one with a
// call in flight, which its bytes could not carry.
func TestExecutor_ExecuteParkable_parkIdle_neverHandsOutCallsInFlight(t *testing.T) {
	isApprove := func(tool string) bool { return tool == "approve" }
	for _, tc := range []struct {
		name   string
		code   string
		parked bool // handed to the caller at least once
		want   string
	}{
		{"a call in flight beside the approval: waited for inside", `
			const s = tools.nap({ms: 300});
			const ok = await tools.approve({});
			return [await s, ok];`, false, `[300, "approve's body"]`},
		{"idle on a timer, then parked for the approval", `
			await new Promise(r => setTimeout(r, 200));
			return await tools.approve({});`, true, `"answered"`},
		{"idle on a call, then parked for the approval", `
			const n = await tools.nap({ms: 200});
			return [n, await tools.approve({})];`, true, `[200, "answered"]`},
		{"the approval made while a call is in flight, then another", `
			const s = tools.nap({ms: 200});
			await new Promise(r => setTimeout(r, 100));
			const a = await tools.approve({});
			return [await s, a, await tools.approve({})];`, true, `[200, "approve's body", "answered"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newIdleWorld(t, wasmhost.NewConfig())
			ex := w.executor(t, testGrace, nil, executor.NewConfig())
			ctx := context.Background()
			r, p := ex.ExecuteParkable(ctx, codeCall(tc.code, nil), isApprove)
			handed := 0
			for p != nil {
				handed++
				require.Less(t, handed, 10)
				s := executor.SuspendedOfParked(p)
				require.False(t, s.Idle, "an idle park is never handed out")
				for _, c := range s.Calls {
					require.Equal(t, wasmhost.CallHeld, c.State, "a parked call in flight: %+v", c)
				}
				answers := map[int32]executor.Answer{}
				for _, c := range p.Calls() {
					answers[c.ID] = executor.Answer{Output: api.Output{Value: json.RawMessage(`"answered"`)}}
				}
				r, p = p.Resume(ctx, answers)
			}
			require.Equal(t, tc.parked, handed > 0)
			require.JSONEq(t, tc.want, string(runValue(t, r).Result))
			require.Positive(t, ex.IdleParkStats().Parks, "parked idle inside")
			require.Zero(t, w.rt.Usage().SuspendedBytes)
		})
	}
}

// Many concurrent runs park and resume while their calls answer at random
// times: each gets its result, each body runs once, nothing stays charged.
func TestExecutor_Execute_parkIdle_hammer(t *testing.T) {
	w := newIdleWorld(t, wasmhost.NewConfig())
	ex := w.executor(t, 5*time.Millisecond, nil, executor.NewConfig())
	const runs = 40
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	completed := 0
	for i := range runs {
		ms := func() int { return rand.IntN(60) }
		last := ms()
		code := fmt.Sprintf(`
			const r = await Promise.all([tools.nap({ms: %d}), tools.nap({ms: %d}),
				new Promise(res => setTimeout(() => res(%d), %d)), tools.nap({ms: %d})]);
			await tools.excl({});
			return r[2] + await tools.nap({ms: %d});`, ms(), ms(), i, ms(), ms(), last)
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := i%8 == 7
		if cancelled {
			time.AfterFunc(time.Duration(rand.IntN(80))*time.Millisecond, cancel)
		} else {
			completed++
		}
		wg.Go(func() {
			defer cancel()
			r := ex.Execute(ctx, codeCall(code, nil))
			switch {
			case r.Err != nil && cancelled && (r.Err.Kind == api.KindAbort || r.Err.Code == api.CodeAbortedBeforeDispatch):
			case r.Err != nil:
				errs <- fmt.Errorf("run %d: %s", i, r.Err.Message)
			case !strings.Contains(string(r.Value), fmt.Sprintf(`"result":%d`, i+last)):
				errs <- fmt.Errorf("run %d: %s", i, r.Value)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// Four naps a run: a nap dispatched again would pass the bound.
	require.LessOrEqual(t, w.bodies("nap"), 4*runs, "no body ran twice")
	require.GreaterOrEqual(t, w.bodies("nap"), 4*completed)
	require.Positive(t, ex.IdleParkStats().Parks)
	require.Zero(t, ex.IdleParkStats().Parked)
	waitFor(t, "nothing left charged", func() bool {
		u := w.rt.Usage()
		return u.SuspendedBytes == 0 && u.Runs == 0
	})
}
