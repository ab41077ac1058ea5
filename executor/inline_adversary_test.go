package executor_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// Adversarial tests of inline nested calls (scheduler.Idle), the hand-over
// of a run whose inline body overstays, and their interplay with the
// sequencer.

// advWorld is a registry of tools for the adversarial tests.
type advWorld struct {
	reg     *registry.Registry
	release chan struct{} // closes to let stuck bodies return
	once    sync.Once

	running     atomic.Int64 // bodies running, stuck ones excluded
	overlaps    atomic.Int64 // exclusive bodies that saw another body running
	stuckIn     atomic.Int64 // stuck bodies entered
	stuckOut    atomic.Int64 // stuck bodies returned
	finals      sync.Map     // tool -> *atomic.Int64, finalizer runs
	bodyStarted chan string  // names of bodies as they start (buffered, best effort)
}

func (w *advWorld) unstick() { w.once.Do(func() { close(w.release) }) }

func (w *advWorld) final(tool string) int64 {
	v, ok := w.finals.Load(tool)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func newAdvWorld(t testing.TB, stuckTimeout time.Duration) *advWorld {
	t.Helper()
	w := &advWorld{reg: registry.New(), release: make(chan struct{}), bodyStarted: make(chan string, 1024)}
	t.Cleanup(w.unstick)
	require.NoError(t, w.reg.DeclareMode(registry.Deployment, api.ModePTC))
	finalize := func(tool string) registry.Finalizer {
		c := &atomic.Int64{}
		w.finals.Store(tool, c)
		return func(_ context.Context, r api.Result) api.Result {
			c.Add(1)
			return r
		}
	}
	note := func(name string) {
		select {
		case w.bodyStarted <- name:
		default:
		}
	}
	tools := []registry.Tool{
		{
			Name: "echo", ConcurrencySafe: true, Finalize: finalize("echo"),
			Body: func(_ context.Context, in api.Input) (api.Output, error) {
				note("echo")
				w.running.Add(1)
				defer w.running.Add(-1)
				return api.Output{Value: in.Args}, nil
			},
		},
		{
			// Sleeps {"ms": n} milliseconds, honouring its context.
			Name: "nap", ConcurrencySafe: true, Finalize: finalize("nap"),
			Body: func(ctx context.Context, in api.Input) (api.Output, error) {
				note("nap")
				w.running.Add(1)
				defer w.running.Add(-1)
				var a struct{ MS int }
				_ = json.Unmarshal(in.Args, &a)
				select {
				case <-time.After(time.Duration(a.MS) * time.Millisecond):
					return api.Output{Value: in.Args}, nil
				case <-ctx.Done():
					return api.Output{}, ctx.Err()
				}
			},
		},
		{
			// Exclusive: must never overlap with another (non-stuck) body.
			Name: "excl", Finalize: finalize("excl"),
			Body: func(_ context.Context, in api.Input) (api.Output, error) {
				note("excl")
				if w.running.Add(1) > 1 {
					w.overlaps.Add(1)
				}
				time.Sleep(2 * time.Millisecond)
				if w.running.Load() > 1 {
					w.overlaps.Add(1)
				}
				w.running.Add(-1)
				return api.Output{Value: in.Args}, nil
			},
		},
		{
			// Ignores its context until the world is released.
			Name: "stuck", ConcurrencySafe: true, Timeout: stuckTimeout, Finalize: finalize("stuck"),
			Body: func(context.Context, api.Input) (api.Output, error) {
				note("stuck")
				w.stuckIn.Add(1)
				defer w.stuckOut.Add(1)
				<-w.release
				return api.ValueOutput("late")
			},
		},
		{
			Name: "boom", ConcurrencySafe: true, Finalize: finalize("boom"),
			Body: func(context.Context, api.Input) (api.Output, error) {
				note("boom")
				panic("boom went the tool")
			},
		},
		{
			// Calls runtime.Goexit: the goroutine running the body ends
			// without returning and without panicking.
			Name: "vanish", ConcurrencySafe: true, Finalize: finalize("vanish"),
			Body: func(context.Context, api.Input) (api.Output, error) {
				note("vanish")
				runtime.Goexit()
				return api.Output{}, nil
			},
		},
	}
	for _, tool := range tools {
		require.NoError(t, w.reg.Register(registry.Deployment, tool))
	}
	return w
}

// advRun runs a program with limits, returning the result and how long it
// took. It fails the test if the run does not return within bound; it then
// cancels the run (and releases stuck bodies) so that the test binary is
// not left hanging.
func advRun(t testing.TB, e *executor.Executor, w *advWorld, code string, limits map[string]any, bound time.Duration) (api.Result, time.Duration) {
	t.Helper()
	args := map[string]any{"code": code, "description": "adversarial program"}
	if limits != nil {
		args["limits"] = limits
	}
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan api.Result, 1)
	start := time.Now()
	go func() { done <- e.Execute(ctx, executor.Call{Name: "run_code", Args: b}) }()
	select {
	case r := <-done:
		return r, time.Since(start)
	case <-time.After(bound):
	}
	// Hung: say so, then try to get out.
	cancel()
	if w != nil {
		w.unstick()
	}
	select {
	case r := <-done:
		t.Errorf("run_code did not return within %v (it returned %v after its context was cancelled: %s)", bound, time.Since(start), r.Text)
		return r, time.Since(start)
	case <-time.After(10 * time.Second):
		t.Fatalf("run_code did not return within %v, nor 10 s after its context was cancelled", bound)
	}
	return api.Result{}, 0
}

// programResult decodes the program's returned value from a run_code result.
func programResult(t testing.TB, r api.Result) string {
	t.Helper()
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return string(v.Result)
}

// seqOf extracts the sequence number of a nested call ID ("...:ptc:N").
var seqRe = regexp.MustCompile(`:ptc:(\d+)$`)

func seqOf(t testing.TB, id string) int {
	t.Helper()
	m := seqRe.FindStringSubmatch(id)
	require.NotNil(t, m, "not a nested call ID: %q", id)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// hookLog records every phase of every nested call, keyed by call.
type hookLog struct {
	mu     sync.Mutex
	events []string // "phase:tool:seq"
	codes  map[int]api.Code
}

func (h *hookLog) add(phase string, req executor.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	seq := "?"
	if m := seqRe.FindStringSubmatch(req.ID); m != nil {
		seq = m[1]
	}
	h.events = append(h.events, phase+":"+req.Tool+":"+seq)
}

func (h *hookLog) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// perCall groups the events by call, keeping their order within a call.
func (h *hookLog) perCall() map[string][]string {
	out := map[string][]string{}
	for _, e := range h.list() {
		parts := strings.SplitN(e, ":", 3)
		if parts[1] == "run_code" {
			continue
		}
		key := parts[1] + ":" + parts[2]
		out[key] = append(out[key], parts[0])
	}
	return out
}

func (h *hookLog) config(cfg executor.Config) executor.Config {
	h.codes = map[int]api.Code{}
	return cfg.
		WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
			h.add("pre", req)
			if req.Tool == "run_code" {
				return executor.Decision{}, nil
			}
			return executor.Decision{Verdict: executor.Ask, Reason: "check"}, nil
		}).
		WithApprover(executor.ApproverFunc(func(_ context.Context, req executor.Request, _ string) (executor.Approval, string, error) {
			h.add("approve", req)
			return executor.ApproveOnce, "", nil
		})).
		WithGuard("", func(_ context.Context, req executor.Request) (string, error) {
			h.add("guard", req)
			return "", nil
		}).
		WithPostExecute(func(_ context.Context, req executor.Request, v json.RawMessage) (executor.PostDecision, error) {
			h.add("post", req)
			return executor.PostDecision{}, nil
		}).
		WithOnStart(func(s executor.Start) { h.add("start", s.Request) }).
		WithOnResult(func(n executor.Notification) {
			h.add("result", n.Request)
			if m := seqRe.FindStringSubmatch(n.Request.ID); m != nil {
				seq, _ := strconv.Atoi(m[1])
				h.mu.Lock()
				if n.Result.Err != nil {
					h.codes[seq] = n.Result.Err.Code
				} else {
					h.codes[seq] = "OK"
				}
				h.mu.Unlock()
			}
		})
}

// The same program, once with its calls run inline and once with a pending
// timer that keeps every call on the sequencer, goes through the same
// phases in the same order with the same notifications, finalizers and
// outcomes.
func TestAdv_inlineAndSequencerPathsAreIndistinguishable(t *testing.T) {
	body := `
		const out = [];
		out.push((await tools.echo({n: 1})).n);
		out.push((await tools.excl({n: 2})).n);
		try { await tools.boom() } catch (e) { out.push(e.message) }
		out.push((await tools.nap({ms: 1, n: 4})).n);
		return out;
	`
	run := func(keepOffInline bool) (string, map[string][]string, map[int]api.Code, *advWorld, int64) {
		w := newAdvWorld(t, 0)
		h := &hookLog{}
		e := newExecutor(t, w.reg, h.config(executor.NewConfig()).WithRuntime(realRuntime(t)))
		inline := inlineCounter(t)
		code := body
		if keepOffInline {
			code = `const keep = setTimeout(() => {}, 60000); try {` + body + `} finally { clearTimeout(keep) }`
		}
		r, _ := advRun(t, e, w, code, nil, 20*time.Second)
		n := inline("echo") + inline("excl") + inline("boom") + inline("nap")
		h.mu.Lock()
		codes := maps(h.codes)
		h.mu.Unlock()
		return programResult(t, r), h.perCall(), codes, w, n
	}
	resInline, phasesInline, codesInline, wInline, nInline := run(false)
	resSeq, phasesSeq, codesSeq, wSeq, nSeq := run(true)

	require.EqualValues(t, 4, nInline, "every call ran inline")
	require.Zero(t, nSeq, "a pending timer keeps every call off the inline path")
	require.JSONEq(t, `[1, 2, "boom panicked: panic: boom went the tool", 4]`, resInline)
	require.JSONEq(t, resInline, resSeq)
	require.Equal(t, phasesSeq, phasesInline, "the phases of each call are the same both ways")
	require.Equal(t, codesSeq, codesInline, "the outcomes are the same both ways")
	for _, tool := range []string{"echo", "excl", "boom", "nap"} {
		require.EqualValues(t, 1, wInline.final(tool), "finalizer of %s inline", tool)
		require.EqualValues(t, 1, wSeq.final(tool), "finalizer of %s on the sequencer", tool)
	}
	for k, v := range phasesInline {
		if strings.HasPrefix(k, "boom:") {
			require.Equal(t, []string{"pre", "approve", "guard", "start", "result"}, v, "a panic gets no post-execute")
		} else {
			require.Equal(t, []string{"pre", "approve", "guard", "start", "post", "result"}, v, k)
		}
	}
}

func maps(m map[int]api.Code) map[int]api.Code {
	out := make(map[int]api.Code, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A program mixing sequential awaits (inline), Promise.all (sequencer) and
// timers: every call settles once, post-execute listeners and result
// notifications see each call once (in completion order), completion
// sequence numbers count 1 to 54, an exclusive call commits after every
// earlier call and before every later one, and exclusive calls never
// overlap with anything.
func TestAdv_commitOrderWithInlineSequencerAndTimers(t *testing.T) {
	w := newAdvWorld(t, 0)
	var mu sync.Mutex
	var posts, results []int
	var seqs []int64
	exclusive := map[int]bool{}
	cfg := executor.NewConfig().
		WithPostExecute(func(_ context.Context, req executor.Request, _ json.RawMessage) (executor.PostDecision, error) {
			if req.Tool == "run_code" {
				return executor.PostDecision{}, nil
			}
			mu.Lock()
			posts = append(posts, seqOf(t, req.ID))
			if req.Tool == "excl" {
				exclusive[seqOf(t, req.ID)] = true
			}
			mu.Unlock()
			return executor.PostDecision{}, nil
		}).
		WithOnResult(func(n executor.Notification) {
			if n.Request.Tool == "run_code" {
				return
			}
			mu.Lock()
			results = append(results, seqOf(t, n.Request.ID))
			seqs = append(seqs, n.Seq)
			mu.Unlock()
		})
	e := newExecutor(t, w.reg, cfg.WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	const program = `
		const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
		let n = 0;
		for (let round = 0; round < 6; round++) {
			n += (await tools.echo({n: 1})).n;                        // inline
			n += (await tools.excl({n: 1})).n;                        // inline, exclusive
			const fan = await Promise.all([                           // sequencer
				tools.nap({ms: 7 - round, n: 1}), tools.excl({n: 1}), tools.nap({ms: round, n: 1}), tools.echo({n: 1})]);
			n += fan.reduce((a, b) => a + b.n, 0);
			const racing = tools.nap({ms: 3, n: 1});                  // a call and a timer together
			await sleep(round % 3);
			n += (await racing).n;
			const [x, y] = await Promise.all([tools.excl({n: 1}), sleep(1).then(() => tools.echo({n: 1}))]);
			n += x.n + y.n;
		}
		return n;
	`
	r, _ := advRun(t, e, w, program, nil, 60*time.Second)
	require.JSONEq(t, `54`, programResult(t, r))
	require.NotZero(t, inline("echo")+inline("excl"), "some calls ran inline")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, results, 54)
	require.Len(t, posts, 54)
	everyOnce := func(what string, order []int) {
		sorted := slices.Sorted(slices.Values(order))
		for i, n := range sorted {
			require.Equal(t, i+1, n, "%s: every call once: %v", what, order)
		}
	}
	everyOnce("result notifications", results)
	everyOnce("post-execute", posts)
	slices.Sort(seqs)
	for i, n := range seqs {
		require.EqualValues(t, i+1, n, "completion sequence numbers: %v", seqs)
	}
	require.Len(t, exclusive, 18)
	for at, n := range posts {
		if !exclusive[n] {
			continue
		}
		for _, before := range posts[:at] {
			require.Less(t, before, n, "a later call committed before exclusive call %d: %v", n, posts)
		}
		for _, after := range posts[at+1:] {
			require.Greater(t, after, n, "an earlier call committed after exclusive call %d: %v", n, posts)
		}
	}
	require.Zero(t, w.overlaps.Load(), "an exclusive call overlapped with another body")
}

// An approver that blocks until its context ends, for an inline call, does
// not hold the run past its wall limit: the run ends with a timeout.
func TestAdv_blockingApproverInlineEndsAtWallLimit(t *testing.T) {
	w := newAdvWorld(t, 0)
	var asked atomic.Int64
	cfg := executor.NewConfig().
		WithPreExecute(func(_ context.Context, req executor.Request) (executor.Decision, error) {
			if req.Tool == "run_code" {
				return executor.Decision{}, nil
			}
			return executor.Decision{Verdict: executor.Ask}, nil
		}).
		WithApprover(executor.ApproverFunc(func(ctx context.Context, _ executor.Request, _ string) (executor.Approval, string, error) {
			asked.Add(1)
			<-ctx.Done()
			return executor.Reject, "gave up", ctx.Err()
		}))
	e := newExecutor(t, w.reg, cfg.WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	r, elapsed := advRun(t, e, w, `await tools.echo({}); return "unreachable"`, map[string]any{"wall_ms": 300}, 10*time.Second)
	require.False(t, r.OK(), r.Text)
	require.Equal(t, api.KindTimeout, r.Err.Kind, r.Text)
	require.Contains(t, r.Text, "wall time limit")
	require.EqualValues(t, 1, asked.Load())
	require.EqualValues(t, 1, inline("echo"))
	require.Less(t, elapsed, 5*time.Second)
}

// Same with a pre-execute listener that blocks until its context ends.
func TestAdv_blockingPreExecuteInlineEndsAtWallLimit(t *testing.T) {
	w := newAdvWorld(t, 0)
	cfg := executor.NewConfig().
		WithPreExecute(func(ctx context.Context, req executor.Request) (executor.Decision, error) {
			if req.Tool == "run_code" {
				return executor.Decision{}, nil
			}
			<-ctx.Done()
			return executor.Decision{}, ctx.Err()
		})
	e := newExecutor(t, w.reg, cfg.WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	r, elapsed := advRun(t, e, w, `await tools.echo({}); return "unreachable"`, map[string]any{"wall_ms": 300}, 10*time.Second)
	require.False(t, r.OK(), r.Text)
	require.Equal(t, api.KindTimeout, r.Err.Kind, r.Text)
	require.EqualValues(t, 1, inline("echo"))
	require.Less(t, elapsed, 5*time.Second)
}

// Same with a post-execute listener that blocks until its context ends: for
// an inline call it runs on the runtime's goroutine (commit), with the
// scheduler's context (before f093177 the run_code body's, which the wall
// deadline did not end: the run hung until the caller cancelled).
func TestAdv_blockingPostExecuteInlineEndsAtWallLimit(t *testing.T) {
	w := newAdvWorld(t, 0)
	cfg := executor.NewConfig().
		WithPostExecute(func(ctx context.Context, req executor.Request, _ json.RawMessage) (executor.PostDecision, error) {
			if req.Tool == "run_code" {
				return executor.PostDecision{}, nil
			}
			<-ctx.Done()
			return executor.PostDecision{}, ctx.Err()
		})
	e := newExecutor(t, w.reg, cfg.WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	r, elapsed := advRun(t, e, w, `await tools.echo({}); return "unreachable"`, map[string]any{"wall_ms": 300}, 5*time.Second)
	t.Logf("took %v: %s", elapsed, r.Text)
	require.EqualValues(t, 1, inline("echo"))
	require.False(t, r.OK(), r.Text)
	require.Equal(t, api.KindTimeout, r.Err.Kind, r.Text)
}

// Several hand-overs in one run: stuck inline bodies, inline calls between
// them, fan-outs with a stuck call; then the stuck bodies return after the
// run ended. Nothing panics, every call settles once, no goroutine is left.
func TestAdv_multipleHandoversInOneRun(t *testing.T) {
	w := newAdvWorld(t, 30*time.Millisecond)
	h := &hookLog{}
	e := newExecutor(t, w.reg, h.config(executor.NewConfig()).WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	runtime.GC()
	before := runtime.NumGoroutine()
	r, elapsed := advRun(t, e, w, `
		const seen = [];
		for (let i = 0; i < 4; i++) {
			try { await tools.stuck(); seen.push("no") } catch (e) { seen.push(e.message.includes("timeout") ? "t" : e.message) }
			seen.push((await tools.echo({i})).i);
		}
		const fan = await Promise.allSettled([tools.stuck(), tools.echo({i: 9}), tools.stuck()]);
		seen.push(fan.map((s) => s.status).join(","));
		seen.push((await tools.excl({i: 10})).i);
		try { await tools.stuck() } catch (e) { seen.push("t2") }
		return seen;
	`, nil, 20*time.Second)
	require.JSONEq(t, `["t",0,"t",1,"t",2,"t",3,"rejected,fulfilled,rejected",10,"t2"]`, programResult(t, r))
	require.Less(t, elapsed, 10*time.Second)
	require.EqualValues(t, 5, inline("stuck"), "the lone stuck calls ran inline")
	require.EqualValues(t, 4, inline("echo"))
	require.EqualValues(t, 7, w.stuckIn.Load())
	require.Zero(t, w.stuckOut.Load(), "the bodies are still stuck")
	require.EqualValues(t, 7, w.final("stuck"), "each stuck call was finalised once")
	for call, phases := range h.perCall() {
		require.Equal(t, 1, count(phases, "result"), "call %s settled once: %v", call, phases)
	}

	// The stuck bodies return after the run ended: their results are dropped.
	w.unstick()
	for deadline := time.Now().Add(5 * time.Second); w.stuckOut.Load() < 7; time.Sleep(time.Millisecond) {
		require.False(t, time.Now().After(deadline), "stuck bodies did not return")
	}
	time.Sleep(20 * time.Millisecond)
	for call, phases := range h.perCall() {
		require.Equal(t, 1, count(phases, "result"), "a late body changed nothing for %s: %v", call, phases)
	}
	require.EqualValues(t, 7, w.final("stuck"))
	testkit.WaitGoroutines(t, before, 5*time.Second)
}

func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// Cancelling the run while an inline body that ignores its context is
// stuck: the call settles after the grace, the run is handed over and ends
// as aborted, promptly.
func TestAdv_handoverWhileCancelling(t *testing.T) {
	w := newAdvWorld(t, 0)
	e := newExecutor(t, w.reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	runtime.GC()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for w.stuckIn.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	r := e.Execute(ctx, executor.Call{Name: "run_code", Args: runCode(`
		for (let i = 0; i < 3; i++) await tools.echo({i});
		await tools.stuck();
		return "unreachable";
	`)})
	require.Less(t, time.Since(start), 5*time.Second)
	require.False(t, r.OK())
	require.Equal(t, api.KindAbort, r.Err.Kind, r.Text)
	require.EqualValues(t, 1, inline("stuck"))
	w.unstick()
	testkit.WaitGoroutines(t, before, 5*time.Second)
}

// Closing the Runtime while a handed-over run is waiting on a call: the
// run ends (aborted, the runtime closed), and the stuck bodies returning
// later change nothing.
func TestAdv_closeDuringHandedOverRun(t *testing.T) {
	dir, err := os.MkdirTemp("", "ptcx-adv-cache-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt, err := wasmhost.New(context.Background(), wasmhost.NewConfig().WithCompilationCacheDir(dir))
	require.NoError(t, err)
	w := newAdvWorld(t, 20*time.Millisecond)
	e := newExecutor(t, w.reg, executor.NewConfig().WithRuntime(rt))
	inline := inlineCounter(t)
	runtime.GC()
	before := runtime.NumGoroutine()

	var wg sync.WaitGroup
	results := make([]api.Result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runProgram(e, `
				try { await tools.stuck() } catch {}
				try { await tools.stuck() } catch {}
				await tools.nap({ms: 60000});
				return "unreachable";
			`)
		}()
	}
	// Wait until every run is handed over twice and waits on its nap.
	for deadline := time.Now().Add(20 * time.Second); w.stuckIn.Load() < int64(2*len(results)) || inline("nap") < int64(len(results)); time.Sleep(time.Millisecond) {
		require.False(t, time.Now().After(deadline), "runs did not reach their nap: %d stuck, %d naps", w.stuckIn.Load(), inline("nap"))
	}
	require.NoError(t, rt.Close(context.Background()))
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		w.unstick()
		t.Fatal("runs did not end after Close")
	}
	for _, r := range results {
		require.False(t, r.OK())
		require.Equal(t, api.KindAbort, r.Err.Kind, r.Text)
		require.Contains(t, r.Text, "closed")
	}
	w.unstick()
	testkit.WaitGoroutines(t, before, 5*time.Second)
	r := runProgram(e, `return 1`)
	require.False(t, r.OK())
}

// A tool body that panics, inline and on the sequencer: INTERNAL, caught by
// the program as a ToolCallError, the run goes on.
func TestAdv_panickingBody(t *testing.T) {
	w := newAdvWorld(t, 0)
	h := &hookLog{}
	e := newExecutor(t, w.reg, h.config(executor.NewConfig()).WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	r, _ := advRun(t, e, w, `
		const out = [];
		try { await tools.boom() } catch (e) { out.push(e.name + ": " + e.message) }
		const s = await Promise.allSettled([tools.boom(), tools.echo({n: 1})]);
		out.push(s[0].status, s[0].reason.message, s[1].value.n);
		out.push((await tools.echo({n: 2})).n);
		return out;
	`, nil, 10*time.Second)
	require.JSONEq(t, `["ToolCallError: boom panicked: panic: boom went the tool","rejected","boom panicked: panic: boom went the tool",1,2]`, programResult(t, r))
	require.EqualValues(t, 1, inline("boom"))
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Equal(t, api.CodeInternal, h.codes[1])
	require.Equal(t, api.CodeInternal, h.codes[2])
}

// A body that calls runtime.Goexit on the runtime's own goroutine (inline).
// Goexit is not a panic: safely does not see it, and the deferred calls of
// the run's goroutine run as it dies. The call should settle (like a panic,
// INTERNAL) and the program should go on. Before f093177 the run's
// goroutine died with the body and the run only ended at its wall limit
// (here 3 s), as a timeout.
func TestAdv_goexitInlineBody(t *testing.T) {
	w := newAdvWorld(t, 0)
	e := newExecutor(t, w.reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	r, elapsed := advRun(t, e, w, `
		let msg = "none";
		try { await tools.vanish() } catch (e) { msg = e.message }
		return [msg, (await tools.echo({n: 1})).n];
	`, map[string]any{"wall_ms": 3000}, 20*time.Second)
	require.EqualValues(t, 1, inline("vanish"))
	t.Logf("inline Goexit: %v, %s", elapsed, r.Text)
	require.True(t, r.OK(), "the run should survive a body that calls runtime.Goexit (took %v): %s", elapsed, r.Text)
	require.Less(t, elapsed, 2*time.Second)
}

// The same body on the sequencer's path (a body goroutine of its own).
// Before f093177 the call never settled and run_code hung in settlement
// forever, after its wall limit.
func TestAdv_goexitSequencedBody(t *testing.T) {
	w := newAdvWorld(t, 0)
	e := newExecutor(t, w.reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	r, elapsed := advRun(t, e, w, `
		const s = await Promise.allSettled([tools.vanish(), tools.echo({n: 1})]);
		return [s[0].status, s[1].value.n];
	`, map[string]any{"wall_ms": 1000}, 8*time.Second)
	require.Zero(t, inline("vanish"))
	t.Logf("sequenced Goexit: %v, %s", elapsed, r.Text)
	require.True(t, r.OK(), "the run should survive a body that calls runtime.Goexit (took %v): %s", elapsed, r.Text)
}

// A stuck body with no timeout of its own, on the sequencer's path: the
// inline path ends such a run at its wall limit (TestInline_stuckBodyWith-
// outTimeoutEndsAtWallLimit); the sequencer's path should too. Before
// f093177 run_code hung in settlement until the body returned.
func TestAdv_stuckSequencedBodyWithoutTimeoutEndsAtWallLimit(t *testing.T) {
	w := newAdvWorld(t, 0)
	e := newExecutor(t, w.reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	r, elapsed := advRun(t, e, w, `await Promise.all([tools.stuck(), tools.echo({})]); return "unreachable"`,
		map[string]any{"wall_ms": 300}, 5*time.Second)
	t.Logf("took %v: %s", elapsed, r.Text)
	require.False(t, r.OK())
	require.Equal(t, api.KindTimeout, r.Err.Kind, r.Text)
}

// A body that honours its context but takes longer than the run's wall
// limit is cancelled at the wall deadline whichever path it takes: same
// outcome, and run_code does not outlive its wall limit by the body's
// length. (Before f093177 the sequencer's path let it run: OK after 3 s
// against ABORTED at 300 ms inline.)
func TestAdv_wallDeadlineReachesBodiesTheSameWayBothPaths(t *testing.T) {
	measure := func(code string) (time.Duration, map[int]api.Code, api.Result) {
		w := newAdvWorld(t, 0)
		h := &hookLog{}
		e := newExecutor(t, w.reg, h.config(executor.NewConfig()).WithRuntime(realRuntime(t)))
		r, elapsed := advRun(t, e, w, code, map[string]any{"wall_ms": 300}, 20*time.Second)
		h.mu.Lock()
		defer h.mu.Unlock()
		return elapsed, maps(h.codes), r
	}
	inlineTook, inlineCodes, ri := measure(`await tools.nap({ms: 3000}); return 1`)
	seqTook, seqCodes, rs := measure(`await Promise.all([tools.nap({ms: 3000}), tools.echo({})]); return 1`)
	t.Logf("inline: %v %v %s", inlineTook, inlineCodes, ri.Text)
	t.Logf("sequencer: %v %v %s", seqTook, seqCodes, rs.Text)
	require.Equal(t, api.KindTimeout, ri.Err.Kind)
	require.Equal(t, api.KindTimeout, rs.Err.Kind)
	require.Equal(t, inlineCodes[1], seqCodes[1], "the nap call's outcome depends on the path it took")
	require.Less(t, seqTook, 2*time.Second, "run_code outlived its wall limit by the body's length on the sequencer's path")
}

// Hundreds of concurrent runs mixing inline, sequenced, stuck, timed-out
// and failing calls, under -race: every run ends as expected, and no
// goroutine is left once the stuck bodies are released. (The tools are
// shared by all runs, so exclusivity is not checked here.)
func TestAdv_hammerMixed(t *testing.T) {
	w := newAdvWorld(t, 15*time.Millisecond)
	var results atomic.Int64
	cfg := executor.NewConfig().WithOnResult(func(executor.Notification) { results.Add(1) })
	e := newExecutor(t, w.reg, cfg.WithRuntime(realRuntime(t)))
	inline := inlineCounter(t)
	runtime.GC()
	before := runtime.NumGoroutine()
	programs := []struct {
		code, want string
		wall       int
	}{
		{`let s = 0; for (let i = 0; i < 5; i++) s += (await tools.echo({n: i})).n; return s`, `10`, 0},
		{`try { await tools.stuck() } catch {} return (await tools.echo({n: 7})).n`, `7`, 0},
		{`const r = await Promise.allSettled([tools.stuck(), tools.nap({ms: 2, n: 3}), tools.excl({n: 1})]); return r.map(x => x.status)`,
			`["rejected","fulfilled","fulfilled"]`, 0},
		{`try { await tools.boom() } catch (e) { return e.message }`, `"boom panicked: panic: boom went the tool"`, 0},
		{`const p = tools.nap({ms: 5, n: 1}); await new Promise(r => setTimeout(r, 1)); try { await tools.stuck() } catch {} return (await p).n`, `1`, 0},
		{`for (let i = 0; i < 3; i++) { try { await tools.stuck() } catch {} } return (await tools.excl({n: 4})).n`, `4`, 0},
		{`await tools.nap({ms: 60000}); return 0`, `timeout`, 100},
		{`let x = 0; const t0 = Date.now(); const p = tools.echo({n: 2}); while (Date.now() - t0 < 20) x++; return (await p).n`, `2`, 0},
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	const runs = 300
	for i := range runs {
		p := programs[i%len(programs)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := map[string]any{"code": p.code, "description": "hammer"}
			if p.wall > 0 {
				args["limits"] = map[string]any{"wall_ms": p.wall}
			}
			b, _ := json.Marshal(args)
			r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: b})
			var got string
			if r.OK() {
				var v executor.RunCodeValue
				_ = json.Unmarshal(r.Value, &v)
				got = string(v.Result)
			} else {
				got = string(r.Err.Kind)
			}
			if got != p.want {
				bad.Add(1)
				t.Logf("%s: got %s: %s", p.code, got, r.Text)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		w.unstick()
		t.Fatal("the hammer did not finish")
	}
	require.Zero(t, bad.Load())
	require.NotZero(t, inline("stuck"))
	require.NotZero(t, inline("echo"))
	w.unstick()
	for deadline := time.Now().Add(10 * time.Second); w.stuckOut.Load() < w.stuckIn.Load(); time.Sleep(time.Millisecond) {
		require.False(t, time.Now().After(deadline))
	}
	testkit.WaitGoroutines(t, before+2, 10*time.Second)
}
