package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// PTCX is ptcx measured end to end: every run is a run_code call through
// one executor over one sandbox (wazero, or wasmtime for ImplPTCXWasmtime),
// its TypeScript stripped by the pipeline, a fresh instance per run, nested
// calls routed through the registry's tools (echo with an input schema,
// sleep20, wait). Suspend, Resume (ptcx_snapshot.go) and PoolMemory
// (ptcx_pool.go) jobs are measured through wasmhost's API, on Runtimes of
// the same engine and limits made for the job.
type PTCX struct {
	name string          // ImplPTCX or ImplPTCXWasmtime
	cfg  wasmhost.Config // the sandbox's: suspend, resume and the pool's Runtimes are made from it
	host *ptcx.Host
	exec *executor.Executor
	park Parking
	// noPython is why this build or engine runs no Python (nil: it does).
	noPython error

	serve *inServe // the serve of the serve workloads, started by the first (serve.go)
}

// NewPTCX starts the sandbox, on wazero, and the executor. The sandbox
// admits p.Live runs at the default memory limit at once (the
// committed-memory cap is raised to fit them; each touches about a
// megabyte).
func NewPTCX(ctx context.Context, p Params) (*PTCX, error) {
	return NewPTCXEngine(ctx, p, wasmhost.EngineWazero)
}

// NewPTCXEngine is NewPTCX on the engine named engine (wasmhost.Engines):
// ImplPTCX for wazero, ImplPTCXWasmtime for wasmtime.
func NewPTCXEngine(ctx context.Context, p Params, engine string) (*PTCX, error) {
	p, err := p.Check()
	if err != nil {
		return nil, err
	}
	name := ImplPTCX
	if engine == wasmhost.EngineWasmtime {
		name = ImplPTCXWasmtime
	}
	runs := max(wasmhost.DefaultRunsPerSlot, p.Live+p.Parallel)
	cfg := wasmhost.NewConfig().WithEngine(engine).
		WithMaxCommittedMemory(int64(2*runs) * api.DefaultMemoryBytes).WithMaxRuns(runs)
	b := &PTCX{name: name, cfg: cfg}
	// Python is enabled where this build and engine run it (its image and
	// warm pool made now, as a deployment's are); else its workloads say
	// why not (RunsLanguage).
	langs := []ptcx.Language{ptcx.LanguageTypeScript}
	if b.noPython = wasmhost.CheckPython(engine); b.noPython == nil {
		langs = append(langs, ptcx.LanguagePython)
	}
	// As any host is built (the tools' bodies need b, for Parking).
	b.host, err = ptcx.New(ctx, ptcx.WithSandbox(cfg), ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(b.tools()...),
		ptcx.WithExecutor(executor.NewConfig().WithMaxParallel(100)), ptcx.WithSessions(ptcx.SessionLimits{}),
		ptcx.WithLanguages(langs...))
	if err != nil {
		return nil, err
	}
	b.exec = b.host.Executor()
	// The first runs after start-up may pay for it (the garbage of
	// compiling the guest, caches filling); they run here, unmeasured, so
	// that the first workload is not charged for start-up.
	warm := []Program{{TS: "return 1", Answer: "1"}}
	if b.noPython == nil {
		warm = append(warm, Program{Python: "1", Answer: "1"})
	}
	for _, p := range warm {
		for range warmupRuns {
			if err := b.run(ctx, p); err != nil {
				b.Close(ctx)
				return nil, fmt.Errorf("bench: warming ptcx up: %w", err)
			}
		}
	}
	runtime.GC()
	return b, nil
}

// warmupRuns is how many runs NewPTCX makes before any is measured.
const warmupRuns = 20

// Close stops the serve the serve workloads started, if any, and the
// sandbox.
func (b *PTCX) Close(ctx context.Context) {
	b.stopServe(ctx)
	_ = b.host.Close(ctx)
}

// Name is ImplPTCX, or ImplPTCXWasmtime on wasmtime.
func (b *PTCX) Name() string { return b.name }

func (b *PTCX) tools() []registry.Tool {
	return []registry.Tool{
		{Name: "echo", Description: "Return the arguments.", ConcurrencySafe: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}`),
			Body: func(_ context.Context, in api.Input) (api.Output, error) {
				return api.Output{Value: in.Args}, nil
			}},
		{Name: "sleep20", Description: "Wait 20 ms.", ConcurrencySafe: true,
			Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
				t := time.NewTimer(20 * time.Millisecond)
				defer t.Stop()
				select {
				case <-t.C:
					return api.ValueOutput(true)
				case <-ctx.Done():
					return api.Output{}, ctx.Err()
				}
			}},
		{Name: "wait", Description: "Wait until the benchmark releases it.", ConcurrencySafe: true,
			Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
				if err := b.park.Wait(ctx); err != nil {
					return api.Output{}, err
				}
				return api.ValueOutput(true)
			}},
	}
}

// RunsLanguage is nil for TypeScript, and for Python where this build
// has the Python guest and the engine runs it: without the guest ptcx is
// missing (make guest-python), on an engine without Python unsupported.
func (b *PTCX) RunsLanguage(lang api.Language) error {
	if lang.Canonical() != api.LanguagePython || b.noPython == nil {
		return nil
	}
	if errors.Is(b.noPython, wasmhost.ErrNoPython) {
		return fmt.Errorf("%w: %w", ErrMissing, b.noPython)
	}
	return fmt.Errorf("%w: %w", ErrUnsupported, b.noPython)
}

// Measure runs j.
func (b *PTCX) Measure(ctx context.Context, j Job) (Raw, error) {
	if j.Language.Canonical() == api.LanguagePython {
		switch j.Kind {
		case Latency, PerCall, Throughput, LiveMemory, Session, AfterSession:
		default:
			return Raw{}, fmt.Errorf("bench: a Python %s workload: ptcx measures Python's latency, per-call, throughput, "+
				"live-memory and session workloads only", j.Kind)
		}
	}
	switch j.Kind {
	case Suspend, Resume:
		return b.snapshots(ctx, j)
	case PoolMemory:
		return b.pooledMemory(ctx, j)
	case Session, AfterSession:
		return MeasureSessions(ctx, j, b.openSession, b.run)
	case ServeLatency:
		return b.serveE2E(ctx, j)
	case ServeThroughput:
		return b.serveRPS(ctx, j)
	case ServeClientTool:
		return b.serveClientTool(ctx, j)
	case Parked:
		return b.parked(ctx, j)
	}
	return MeasureFunc(ctx, j, b.run, &b.park)
}

// run is one run_code call of p, its answer checked.
func (b *PTCX) run(ctx context.Context, p Program) error {
	args, err := runCodeArgs(p)
	if err != nil {
		return err
	}
	r := b.exec.Execute(ctx, executor.Call{Name: registry.RunCode, Args: args})
	if !r.OK() {
		return fmt.Errorf("run_code failed: %s", r.Text)
	}
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(r.Value, &out); err != nil {
		return fmt.Errorf("run_code's value %s: %w", r.Value, err)
	}
	return CheckAnswer(p, out.Result)
}

// runCodeArgs are run_code's arguments for p: its code, and its language
// when it is not TypeScript.
func runCodeArgs(p Program) (json.RawMessage, error) {
	code, lang := p.Source()
	args := map[string]any{"code": code, "description": "ptcx bench"}
	if lang != api.LanguageTypeScript {
		args["language"] = string(lang)
	}
	return json.Marshal(args)
}
