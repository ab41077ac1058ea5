package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	wapi "github.com/tetratelabs/wazero/api"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/runners"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/admit"
	"github.com/ptcx/ptcx/wasmhost/internal/bytecode"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// errInitFailed means ptcx_init returned an error status.
var errInitFailed = errors.New("wasmhost: the guest failed to initialise")

// runnersMaxIdle bounds the runners waiting for a run at once: as many as
// run at once on the 2-core machines we measure on, and as many again
// finishing.
const runnersMaxIdle = 4

// runnersIdleFor is how long a runner waits for a run before it exits:
// runs a few a second apart reuse one, and a Runtime left idle holds none
// after it.
const runnersIdleFor = 500 * time.Millisecond

// Runtime runs programs in the guest. It compiles the guest once, in New,
// and creates a fresh instance for every run: nothing of one run is visible
// to the next. A Runtime is safe for concurrent use by many goroutines;
// each Run uses its own instance. It reaches the guest through its engine
// (engine.go), wazero's or wasmtime's, on which the guest is compiled.
type Runtime struct {
	cfg  Config
	lang api.Language // the guest's language: "" for TypeScript (QuickJS)
	// python is the Python guest's Runtime, made at the first Python run
	// (python.go); it shares this one's admission, slots and runners.
	python  pythonGuest
	parent  *Runtime   // the Runtime whose language Runtime this is (python.go), or nil
	limits  api.Limits // cfg.limits with defaults: the ceiling of every run
	eng     engine.Engine
	module  engine.Module
	prelude []byte // the prelude's bytecode, compiled by the guest in New
	image   *image // the initialised guest, nil when off (Config.WithImage)
	pool    *pool  // restored instances ready for runs, nil when off (Config.WithPool)
	// sessions are the live idle sessions, which yield to runs (session_live.go).
	sessions liveSessions
	// bytecode caches programs' bytecode, nil when off (Config.WithBytecodeCache).
	bytecode *bytecode.Cache

	slots     *admit.Gate // guests executing at once (compute.go)
	admission *admit.Gate // runs admitted at once, and their memory (admission.go)
	admitWait time.Duration
	// pooledBytes is what the idle pooled instances are charged to
	// admission's bytes (not its count); guarded by admission's lock (admit.Gate.Charge).
	pooledBytes int64
	// suspendedBytes is what the snapshots of idle suspensions are charged
	// to admission's bytes (suspend_idle.go), its Python Runtime's too (suspendedCounter);
	// guarded by admission's lock (admit.Gate.Charge).
	suspendedBytes int64
	// snapBufs are snapshot buffers to recycle (snapshot_buffers.go).
	snapBufs snapshotBuffers
	// resumeSpares are memories kept backed for resumes (pool_resume.go).
	resumeSpares resumeSpares
	// runners are the goroutines runs execute on (internal/runners).
	runners *runners.Runners
	// startInline is set when the guest is one ptcx builds and embeds
	// (QuickJS or CPython, metered at every loop): a run then starts on
	// its caller's goroutine (run.run).
	startInline bool

	mu        sync.Mutex
	closed    atomic.Bool
	closing   context.Context // done once Close was called: runs stop
	closeRuns context.CancelCauseFunc
	running   int // guests still executing (run.execute)
	closeCtx  context.Context
	release   sync.Once // closes wazero once no guest executes
	closeErr  error
}

// New compiles the guest and checks that it speaks this host's ABI version.
// The guest is the one given by Config.WithGuest, else the one this build
// embeds, else the file named by the PTCX_GUEST environment variable; with
// none, New fails with ErrNoGuest. Close the Runtime when done with it.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if err := cfg.limits.Validate(); err != nil {
		return nil, fmt.Errorf("wasmhost: invalid limits: %w", err)
	}
	if err := cfg.checkStartup(); err != nil {
		return nil, err
	}
	if cfg.engineFromEnv {
		if err := checkEnvEngine(cfg.engine); err != nil {
			return nil, err // the name is the environment's: say so
		}
	}
	rt := &Runtime{cfg: cfg, limits: cfg.limits.WithDefaults()}
	if err := rt.setAdmission(cfg.admission); err != nil {
		return nil, err
	}
	rt.closing, rt.closeRuns = context.WithCancelCause(context.WithoutCancel(ctx))
	rt.runners = runners.New(rt.closing.Done(), runnersMaxIdle, runnersIdleFor)
	eng, err := newEngine(ctx, cfg.engineName(), rt.limits.MemoryBytes, cfg.cacheDir)
	if err != nil {
		return nil, err
	}
	rt.eng = eng
	bin, isEmbedded, err := cfg.guestModule()
	rt.startInline = isEmbedded
	if err == nil {
		err = rt.setUp(ctx, bin)
	}
	if err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	return rt, nil
}

// setUp compiles bin, the metered guest, prepares it and makes its image
// and pool.
func (rt *Runtime) setUp(ctx context.Context, bin []byte) error {
	module, err := rt.eng.Compile(ctx, bin)
	if err != nil {
		return fmt.Errorf("wasmhost: compile the guest: %w", err)
	}
	rt.module = module
	if err := rt.prepare(ctx); err != nil {
		return err
	}
	if rt.cfg.bytecodeEntries > 0 {
		rt.bytecode = bytecode.New(rt.cfg.bytecodeEntries, rt.cfg.bytecodeBytes)
	}
	// A guest without ptcx_restored (an older or a hand-made one) is
	// instantiated afresh for every run.
	if restorable := module.Exports(abi.ExportRestored); !rt.cfg.noImage && restorable {
		if rt.image, err = rt.makeImage(ctx, bin, rt.cfg.copyRestore); err != nil {
			return err
		}
		rt.pool = newPool(rt, rt.cfg.poolSize())
	}
	return nil
}

// prepare instantiates the guest once: it checks the guest's ABI version,
// then has it compile the prelude to bytecode, which every instance then
// loads instead of compiling it again (about 25 times faster).
func (rt *Runtime) prepare(ctx context.Context) error {
	if !rt.module.Exports(abi.ExportABIVersion) {
		return fmt.Errorf("wasmhost: the guest has no %s export: it is not a ptcx guest", abi.ExportABIVersion)
	}
	mod, err := rt.eng.Instantiate(ctx, rt.module, nil, world.New(world.Spec{Deterministic: true}), true)
	if err != nil {
		return fmt.Errorf("wasmhost: instantiate the guest: %w", err)
	}
	defer mod.Close(ctx)
	var stack [4]uint64
	if err := mod.Function(abi.ExportABIVersion).CallWithStack(ctx, stack[:]); err != nil {
		return fmt.Errorf("wasmhost: %s: %w", abi.ExportABIVersion, err)
	}
	if v := wapi.DecodeI32(stack[0]); v != abi.ABIVersion {
		return fmt.Errorf("wasmhost: the guest speaks ABI version %d, this host version %d: rebuild the guest (make guest)", v, abi.ABIVersion)
	}
	setup := &run{rt: rt, inbox: newInbox()}
	rctx := context.WithValue(ctx, runKey{}, setup)
	setup.ctx = rctx
	call := func(name string, params ...uint64) (uint64, error) {
		f := mod.Function(name)
		if f == nil {
			return 0, fmt.Errorf("wasmhost: the guest has no %s export", name)
		}
		var stack [4]uint64
		copy(stack[:], params)
		if err := f.CallWithStack(rctx, stack[:]); err != nil {
			return 0, fmt.Errorf("wasmhost: %s: %w", name, err)
		}
		return stack[0], nil
	}
	if status, err := call(abi.ExportInit, 0, 0); err != nil {
		return err
	} else if status != abi.StatusDone {
		if setup.guestErr != nil {
			return fmt.Errorf("wasmhost: %s failed: %w: %s", abi.ExportInit, errInitFailed, setup.guestErr.Message)
		}
		return fmt.Errorf("wasmhost: %s failed: %w", abi.ExportInit, errInitFailed)
	}
	if rt.lang == api.LanguagePython {
		return nil // no prelude: ptcx_init takes none (docs/abi.md)
	}
	lenPtr, err := call(abi.ExportBuffer, 4)
	if err != nil {
		return err
	}
	ptr, err := call(abi.ExportBytecode, lenPtr)
	if err != nil {
		return err
	}
	mem := mod.Memory()
	if mem == nil {
		return abi.ErrStaleGuest
	}
	n, ok := mem.ReadUint32Le(uint32(lenPtr))
	if !ok || ptr == 0 {
		return fmt.Errorf("wasmhost: the guest could not compile its prelude")
	}
	bytecode, ok := mem.Read(uint32(ptr), n)
	if !ok {
		return fmt.Errorf("wasmhost: %s returned [%d, %d), outside memory", abi.ExportBytecode, ptr, uint64(ptr)+uint64(n))
	}
	rt.prelude = append([]byte(nil), bytecode...)
	return nil
}

// Limits returns the Runtime's limits (the Config's, with defaults filled
// in): the ceiling of every run.
func (rt *Runtime) Limits() api.Limits { return rt.limits }

// Close releases the compiled guest and the compilation cache. Runs still
// in progress end with KindAbort, and Run afterwards returns ErrClosed.
// Close does not wait for a guest stuck in a long native loop (see Run):
// the last such guest releases the resources when it stops. Close is safe
// to call more than once and concurrently with Run.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed.Load() {
		rt.mu.Unlock()
		return nil
	}
	rt.closed.Store(true)
	rt.closeRuns(ErrClosed)
	rt.closePython(ctx)
	rt.pool.close()
	rt.closeSnapshotBuffers()
	rt.closeResumeSpares()
	rt.closeCtx = context.WithoutCancel(ctx)
	idle := rt.running == 0
	rt.mu.Unlock()
	if idle {
		rt.releaseAll()
		return rt.closeErr
	}
	return nil
}

// Done returns a channel closed once Close is called. A host waiting to
// resume an idle suspension (Suspended.Idle) ends it then
// (Suspended.End with ErrClosed), as Close ends the runs in progress.
func (rt *Runtime) Done() <-chan struct{} { return rt.closing.Done() }

// releaseAll closes the engine, once: instances must not be closed under
// a guest that still executes.
func (rt *Runtime) releaseAll() {
	rt.release.Do(func() {
		var err error
		if rt.eng != nil {
			err = rt.eng.Close(rt.closeCtx)
		}
		if rt.image != nil {
			rt.image.close()
		}
		rt.closeErr = err
	})
}

// acquire counts a guest that starts executing; it fails once closed.
func (rt *Runtime) acquire() bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed.Load() {
		return false
	}
	rt.running++
	return true
}

// done counts a guest that stopped executing, and releases wazero after the
// last one if the Runtime is closed.
func (rt *Runtime) done() {
	rt.mu.Lock()
	rt.running--
	last := rt.closed.Load() && rt.running == 0
	rt.mu.Unlock()
	if last {
		rt.releaseAll()
	}
}

// Run runs one program and returns what it produced. The program's limits
// are p.Limits lowered to the Runtime's (Limits.Within).
//
// A program that fails returns a *RunError (check with errors.As); the
// Outcome then still carries Stats. Any other error (an invalid Program, a
// closed Runtime, ErrBusy) means the program did not run.
//
// A run is admitted first (admission.go): when the Runtime already has its
// maximum of runs, or the guest memory of its runs leaves too little of the
// committed memory cap for a new instance, it waits in line, at most the admission wait and
// never past its wall deadline, and then fails with ErrBusy; cancelled
// meanwhile, it fails with KindAbort. The wall limit covers that wait.
//
// The embedded guest runs on the goroutine that called Run until its first
// export ends, then, if the program waits, on a goroutine of its own (a
// guest given by Config.WithGuest runs on one of its own throughout, which
// Run can abandon: docs/security.md). d.Dispatch is called from the
// goroutine running the guest, one call at a time, and never after Run
// returned; it must not block. Outcomes may be reported from any goroutine, at any time, more than once (the first counts). When
// Run returns, calls still pending are the caller's to finish or abandon:
// their outcomes are ignored, but for an idle suspension's (Suspended.Idle),
// which answer the run that resumes from it (Resumption.Attach).
func (rt *Runtime) Run(ctx context.Context, p Program, d Dispatcher) (Outcome, error) {
	if rt.closed.Load() {
		return Outcome{}, ErrClosed
	}
	if err := p.Limits.Validate(); err != nil {
		return Outcome{}, fmt.Errorf("wasmhost: invalid program limits: %w", err)
	}
	if d == nil {
		return Outcome{}, errors.New("wasmhost: nil Dispatcher")
	}
	if p.Language.Canonical() != rt.lang.Canonical() {
		py, err := rt.pythonFor(ctx, p)
		if err != nil {
			return Outcome{}, err
		}
		return py.Run(ctx, p, d)
	}
	r, err := newRun(rt, p, d)
	if err != nil {
		return Outcome{}, err
	}
	r.start()
	if err := rt.admit(ctx, r); err != nil {
		return Outcome{Stats: Stats{Wall: time.Since(r.began)}}, err
	}
	if !rt.acquire() {
		rt.admission.Release(r.committed)
		return Outcome{}, ErrClosed
	}
	return r.run(ctx)
}
