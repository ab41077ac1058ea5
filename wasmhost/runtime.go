package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/ptcx/ptcx/guest"
)

// ErrClosed is returned by Run on a closed Runtime.
var ErrClosed = errors.New("wasmhost: the Runtime is closed")

// errInitFailed means ptcx_init returned an error status.
var errInitFailed = errors.New("wasmhost: the guest failed to initialise")

// Runtime runs programs in the guest. It compiles the guest once, in New,
// and creates a fresh instance for every run: nothing of one run is visible
// to the next. A Runtime is safe for concurrent use by many goroutines;
// each Run uses its own instance.
type Runtime struct {
	cfg     Config
	limits  Limits // cfg.limits with defaults: the ceiling of every run
	wr      wazero.Runtime
	cache   wazero.CompilationCache
	module  wazero.CompiledModule
	prelude []byte // the prelude's bytecode, compiled by the guest in New

	mu      sync.Mutex
	closed  atomic.Bool
	closing chan struct{} // closed by Close: waiting runs stop
}

// New compiles the guest and checks that it speaks this host's ABI version.
// Close the Runtime when done with it.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if err := checkLimits(cfg.limits); err != nil {
		return nil, fmt.Errorf("wasmhost: invalid limits: %w", err)
	}
	rt := &Runtime{cfg: cfg, limits: cfg.limits.WithDefaults(), closing: make(chan struct{})}
	// Not WithCloseOnContextDone: it calls into Go at every loop header,
	// which for an interpreter is every bytecode and makes it 3 to 5 times
	// slower. The guest polls the host instead (see run.watch).
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(memoryPages(rt.limits.MemoryBytes))
	if cfg.cacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(cfg.cacheDir)
		if err != nil {
			return nil, fmt.Errorf("wasmhost: compilation cache: %w", err)
		}
		rt.cache = cache
		rc = rc.WithCompilationCache(cache)
	}
	rt.wr = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := rt.setUp(ctx); err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	return rt, nil
}

func (rt *Runtime) setUp(ctx context.Context) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt.wr); err != nil {
		return fmt.Errorf("wasmhost: WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt.wr); err != nil {
		return fmt.Errorf("wasmhost: host module: %w", err)
	}
	bin := rt.cfg.guest
	if bin == nil {
		bin = guest.Wasm()
	}
	module, err := rt.wr.CompileModule(ctx, bin)
	if err != nil {
		return fmt.Errorf("wasmhost: compile the guest: %w", err)
	}
	rt.module = module
	return rt.prepare(ctx)
}

// prepare instantiates the guest once: it checks the guest's ABI version,
// then has it compile the prelude to bytecode, which every instance then
// loads instead of compiling it again (about 25 times faster).
func (rt *Runtime) prepare(ctx context.Context) error {
	f := rt.module.ExportedFunctions()[exportABIVersion]
	if f == nil {
		return fmt.Errorf("wasmhost: the guest has no %s export: it is not a ptcx guest", exportABIVersion)
	}
	mod, err := rt.wr.InstantiateModule(ctx, rt.module, rt.moduleConfig())
	if err != nil {
		return fmt.Errorf("wasmhost: instantiate the guest: %w", err)
	}
	defer mod.Close(ctx)
	res, err := mod.ExportedFunction(exportABIVersion).Call(ctx)
	if err != nil {
		return fmt.Errorf("wasmhost: %s: %w", exportABIVersion, err)
	}
	if v := api.DecodeI32(res[0]); v != abiVersion {
		return fmt.Errorf("wasmhost: the guest speaks ABI version %d, this host version %d: rebuild the guest (make guest)", v, abiVersion)
	}
	setup := &run{rt: rt, inbox: newInbox()}
	rctx := context.WithValue(ctx, runKey{}, setup)
	setup.ctx = rctx
	call := func(name string, params ...uint64) (uint64, error) {
		f := mod.ExportedFunction(name)
		if f == nil {
			return 0, fmt.Errorf("wasmhost: the guest has no %s export", name)
		}
		res, err := f.Call(rctx, params...)
		if err != nil {
			return 0, fmt.Errorf("wasmhost: %s: %w", name, err)
		}
		return res[0], nil
	}
	if status, err := call(exportInit, 0, 0); err != nil {
		return err
	} else if status != statusDone {
		return fmt.Errorf("wasmhost: %s failed: %w", exportInit, errInitFailed)
	}
	lenPtr, err := call(exportBuffer, 4)
	if err != nil {
		return err
	}
	ptr, err := call(exportBytecode, lenPtr)
	if err != nil {
		return err
	}
	n, ok := mod.Memory().ReadUint32Le(uint32(lenPtr))
	if !ok || ptr == 0 {
		return fmt.Errorf("wasmhost: the guest could not compile its prelude")
	}
	bytecode, ok := mod.Memory().Read(uint32(ptr), n)
	if !ok {
		return fmt.Errorf("wasmhost: %s returned [%d, %d), outside memory", exportBytecode, ptr, uint64(ptr)+uint64(n))
	}
	rt.prelude = append([]byte(nil), bytecode...)
	return nil
}

// Limits returns the Runtime's limits (the Config's, with defaults filled
// in): the ceiling of every run.
func (rt *Runtime) Limits() Limits { return rt.limits }

// Close releases the compiled guest and the compilation cache. Runs still
// in progress end with KindAbort. Close is safe to call more than once and
// concurrently with Run.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed.Load() {
		rt.mu.Unlock()
		return nil
	}
	rt.closed.Store(true)
	close(rt.closing)
	rt.mu.Unlock()
	err := rt.wr.Close(ctx)
	if rt.cache != nil {
		err = errors.Join(err, rt.cache.Close(ctx))
	}
	return err
}

// Run runs one program and returns what it produced. The program's limits
// are p.Limits lowered to the Runtime's (Limits.Within).
//
// A program that fails returns a *RunError (check with errors.As); the
// Outcome then still carries Stats. Any other error (an invalid Program, a
// closed Runtime) means the program did not run.
//
// Calls to d are made from the goroutine that called Run, while the guest
// waits; the outcomes may be reported from any goroutine. When Run returns,
// calls still pending are the caller's to finish or abandon: their outcomes
// are ignored.
func (rt *Runtime) Run(ctx context.Context, p Program, d Dispatcher) (Outcome, error) {
	if rt.closed.Load() {
		return Outcome{}, ErrClosed
	}
	if err := checkLimits(p.Limits); err != nil {
		return Outcome{}, fmt.Errorf("wasmhost: invalid program limits: %w", err)
	}
	if d == nil {
		return Outcome{}, errors.New("wasmhost: nil Dispatcher")
	}
	r, err := newRun(rt, p, d)
	if err != nil {
		return Outcome{}, err
	}
	return r.run(ctx)
}
