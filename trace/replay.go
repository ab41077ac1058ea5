package trace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// ReplayConfig is how Replay runs a record. The zero value is not usable:
// Runtime is required.
type ReplayConfig struct {
	// Runtime runs the program (a *wasmhost.Runtime).
	Runtime executor.CodeRuntime
	// Registry, when set, answers the calls the trace lacks with its real
	// tools ("what if" runs), and the run is made in the record's scope of
	// it (the recorded calls are then answered without an executor, so a
	// failure's text names only the calls made for real); nil means such a
	// call is a divergence, and every call goes through an executor to
	// stand-in tools that answer from the trace.
	Registry *registry.Registry
	// Executor is the executor configuration of the replay (hooks for the
	// real tools); its runtime and limits are replaced by the replay's.
	Executor executor.Config
	// GateWait bounds how long a replayed call waits for the call completed
	// before it in the trace, which the program may never make if it runs
	// differently from the trace; past it the call fails with an INTERNAL
	// error naming both calls. 0 means DefaultGateWait; negative is an
	// error.
	GateWait time.Duration
	// Policies, when not nil, are the data-flow declarations the stand-in
	// tools carry, by name, instead of the record's (what if the policy
	// were this one); nil: the record's. Without a Registry, the replay
	// recomputes every call's label and denial from them and reports the
	// first that differs from the record's as a divergence.
	Policies map[string]policy.Declaration
	// Plan, when not nil, is the approved plan the replay is bound to
	// instead of the record's (what if the run had been bound to this
	// one; Record.Plan otherwise, and no plan when the record has none).
	// A call the plan refuses is DENIED (rule "plan"); without a
	// Registry, the replay reports the first call refused otherwise than
	// in the record as a divergence ("policy").
	Plan *api.Plan
}

// Report is what a replay found.
type Report struct {
	// Result is the replayed run_code call's result.
	Result api.Result
	// Record is the replay's own record; its calls are those the program
	// made, with the answers it got (from the trace, or from the real tools
	// for calls the trace lacks: those carry only the error message).
	Record Record
	// Divergence is the first call that departed from the trace; nil if
	// none did.
	Divergence *Divergence
	// Differences list what of the outcome (text, logs, result, error)
	// differs from the trace, one line each.
	Differences []string
}

// OK reports whether the replay reproduced the trace: no divergence, the
// same outcome.
func (r Report) OK() bool { return r.Divergence == nil && len(r.Differences) == 0 }

// Replay re-runs rec's program with every nested call answered from rec —
// the same seed and clock start, the same limits, results released in the
// recorded completion order — and compares the outcome with rec's. It
// stops the program at the first divergence. The error is for a replay
// that could not be made at all (no runtime, a scope the registry lacks);
// what the program did is in the Report.
//
// A record made without a seed replays only where the program reads
// neither the clock nor the random source; one whose program raced timers
// against tool latency may be released in another order than it ran.
func Replay(ctx context.Context, rec Record, cfg ReplayConfig) (Report, error) {
	if cfg.Runtime == nil {
		return Report{}, errors.New("trace: Replay needs a Runtime")
	}
	if err := rec.Check(); err != nil {
		return Report{}, fmt.Errorf("trace: record %s cannot be replayed: %w", rec.ID, err)
	}
	if cfg.GateWait < 0 {
		return Report{}, fmt.Errorf("trace: ReplayConfig.GateWait %v: want a positive duration, or 0 for the default %v", cfg.GateWait, DefaultGateWait)
	}
	wait := cfg.GateWait
	if wait == 0 {
		wait = DefaultGateWait
	}
	reg, scope := cfg.Registry, rec.Scope
	var g *gates
	if reg == nil {
		g = newGates(rec.Calls, wait)
		pols := rec.Policies
		if cfg.Policies != nil {
			pols = cfg.Policies
		}
		r, err := replayRegistry(&rec, g, pols)
		if err != nil {
			return Report{}, err
		}
		reg, scope = r, registry.Deployment
	}
	world, err := worldOf(rec)
	if err != nil {
		return Report{}, err
	}
	rr := &replayRuntime{rt: cfg.Runtime, rec: &rec, gates: g}
	var got Record
	recorder := NewRecorder(reg, func(r Record) { got = r })
	ecfg := cfg.Executor
	if g != nil {
		// Every recorded call may be running at once: a call waiting for
		// its turn must not hold a slot the call before it needs.
		ecfg = ecfg.WithMaxParallel(max(len(rec.Calls), 1))
		if rec.HandleOverBytes > 0 { // the results the run held as handles for their size
			ecfg = ecfg.WithHandleOverBytes(rec.HandleOverBytes)
		}
	}
	// Assembled as any host is; the registry (maybe the caller's) keeps
	// its description of run_code, which a replay never shows.
	opts := []ptcx.Option{ptcx.WithRegistry(reg), ptcx.WithCodeRuntime(rr), ptcx.WithExecutor(recorder.Install(ecfg)),
		ptcx.WithLimits(rec.Limits.API()), ptcx.WithPlainRunCodeDescription()}
	if l, err := api.ParseLanguage(string(rec.Program.Language)); err == nil && l != api.LanguageTypeScript {
		opts = append(opts, ptcx.WithLanguages(api.LanguageTypeScript, l)) // the record's program runs in its language
	}
	h, err := ptcx.New(ctx, opts...)
	if err != nil {
		return Report{}, fmt.Errorf("trace: replaying %s: %w", rec.ID, err)
	}
	ex := h.Executor()
	args, err := runCodeArgs(rec.Program)
	if err != nil {
		return Report{}, err
	}
	bound := rec.Plan
	if cfg.Plan != nil {
		bound = cfg.Plan
	}
	res := ex.Execute(ctx, executor.Call{ID: rec.ID, Scope: scope, Name: registry.RunCode, Args: args, World: world, Plan: bound})
	calls, reads, div := rr.result()
	if calls == nil {
		calls = []Call{}
	}
	if g != nil {
		withFlow(calls, got.Calls) // the executor's labels, denials and handles, which the dispatcher does not see
	}
	got.Calls, got.Reads = calls, reads
	renameHandles(rec, &got) // handles.go
	rep := Report{Result: res, Record: got, Divergence: div}
	if rep.Divergence == nil && g != nil && rec.Version >= 2 {
		rep.Divergence = flowDivergence(rec.Calls, calls)
	}
	if rep.Divergence == nil {
		rep.Differences = differences(rec, got)
	}
	return rep, nil
}

// worldOf is the world a record's program ran in.
func worldOf(rec Record) (*wasmhost.World, error) {
	if rec.Seed == nil {
		return nil, nil
	}
	w := &wasmhost.World{Seed: *rec.Seed}
	if rec.ClockStart != "" {
		t, err := time.Parse(time.RFC3339Nano, rec.ClockStart)
		if err != nil {
			return nil, fmt.Errorf("trace: record %s: clock_start: %w", rec.ID, err)
		}
		w.Start = t
	}
	return w, nil
}

// differences lists how got's outcome differs from want's.
func differences(want, got Record) []string {
	var d []string
	if want.Text != got.Text {
		d = append(d, fmt.Sprintf("text: recorded %q, replayed %q", want.Text, got.Text))
	}
	if !slices.Equal(want.Logs, got.Logs) {
		d = append(d, fmt.Sprintf("logs: recorded %q, replayed %q", want.Logs, got.Logs))
	}
	if string(want.Result) != string(got.Result) {
		d = append(d, fmt.Sprintf("result: recorded %s, replayed %s", want.Result, got.Result))
	}
	if want.Outcome != got.Outcome {
		d = append(d, fmt.Sprintf("outcome: recorded %s, replayed %s", want.Outcome, got.Outcome))
	}
	if want.Version >= 2 && !sameLabel(want.Labels, got.Labels) {
		d = append(d, fmt.Sprintf("labels: recorded %s, replayed %s", labelText(want.Labels), labelText(got.Labels)))
	}
	return d
}

// replayRuntime runs the program with the trace's bindings and answers its
// calls from the trace.
type replayRuntime struct {
	rt    executor.CodeRuntime
	rec   *Record
	gates *gates // nil: the real tools answer the calls past the trace

	mu    sync.Mutex
	calls []Call
	reads []Read
	div   *Divergence
}

// result returns the calls the program made, its reads of their handles
// and the divergence.
func (r *replayRuntime) result() ([]Call, []Read, *Divergence) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, r.reads, r.div
}

func (r *replayRuntime) Run(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
	tools := slices.Clone(r.rec.Tools)
	if r.gates == nil {
		for _, t := range p.Tools {
			if !slices.Contains(tools, t) {
				tools = append(tools, t)
			}
		}
	}
	p.Tools = tools
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rd := newReplayDispatcher(r.rec, cancel)
	if r.gates == nil {
		rd.fallback = d
	} else {
		rd.through, rd.gates = d, r.gates
	}
	out, err := r.rt.Run(ctx, p, rd)
	calls, div := rd.finish()
	r.mu.Lock()
	r.calls, r.div, r.reads = calls, div, rd.madeReads()
	r.mu.Unlock()
	return out, err
}
