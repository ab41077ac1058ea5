package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"sync"

	"github.com/tetratelabs/wazero"
	wapi "github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
	"github.com/ptcx/ptcx/wasmhost/internal/wasmbin"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// wazeroEngine is the default engine: wazero's compiler, with its
// compilation cache on disk when the Config names a directory. Instances'
// memories are cappedMemory (memory.go), through wazero's memory
// allocator.
type wazeroEngine struct {
	wr    wazero.Runtime
	cache wazero.CompilationCache
	// fsys, when set, is mounted read-only at mount in every instance
	// (NewWazeroFS); nil: instances have no file system.
	fsys  fs.FS
	mount string
	// tables maps a live instance's module (the api.Module its WASI calls
	// are given) to its file table, from before its _initialize runs until
	// it closes (Instantiate, wazeroInstance.Close). sync.Map: its loads,
	// one a file call, take no lock.
	tables sync.Map // wapi.Module → *wasifs.Table
}

func newWazero(ctx context.Context, memoryBytes int64, cacheDir string, host []HostFunc) (Engine, error) {
	return newWazeroEngine(ctx, &wazeroEngine{}, memoryBytes, cacheDir, host)
}

// NewWazeroFS returns the factory of a wazero engine whose instances see
// fsys, read-only, at mount: their one preopened directory, and the only
// file system they have (the Python guest's standard library). Their WASI
// file functions are package wasifs's, not wazero's, each instance with a
// table of open files of its own that the host reads, resets and restores
// (FileTable); the other WASI functions are wazero's.
func NewWazeroFS(fsys fs.FS, mount string) Factory {
	return func(ctx context.Context, memoryBytes int64, cacheDir string, host []HostFunc) (Engine, error) {
		return newWazeroEngine(ctx, &wazeroEngine{fsys: fsys, mount: mount}, memoryBytes, cacheDir, host)
	}
}

func newWazeroEngine(ctx context.Context, e *wazeroEngine, memoryBytes int64, cacheDir string, host []HostFunc) (Engine, error) {
	rc := wazero.NewRuntimeConfigCompiler().
		WithMemoryLimitPages(abi.MemoryPages(memoryBytes))
	if cacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			return nil, fmt.Errorf("wasmhost: compilation cache: %w", err)
		}
		e.cache = cache
		rc = rc.WithCompilationCache(cache)
	}
	e.wr = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := e.instantiateWASI(ctx); err != nil {
		_ = e.Close(ctx)
		return nil, fmt.Errorf("wasmhost: WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, e.wr, host); err != nil {
		_ = e.Close(ctx)
		return nil, fmt.Errorf("wasmhost: host module: %w", err)
	}
	return e, nil
}

// instantiateWASI defines wazero's WASI module in e's runtime. Without a
// file system, its fd_close is stateless: it reports success for the
// standard streams and EBADF for any other descriptor, and closes nothing
// (as the wasmtime engine's). The guest has no other descriptors, and
// nothing a run does then changes the instance's WASI state, so an
// instance reused for another run (pool.go, recycle) has the same as a
// new one. With one (NewWazeroFS), the file functions are wasifs.Funcs on
// the calling instance's table (e.tables), which the host resets itself.
func (e *wazeroEngine) instantiateWASI(ctx context.Context) error {
	const errnoSuccess, errnoBadf = 0, 8 // WASI's errno values
	i32, i64 := wapi.ValueTypeI32, wapi.ValueTypeI64
	b := e.wr.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	if e.fsys != nil {
		for _, f := range wasifs.Funcs {
			params := make([]wapi.ValueType, len(f.Params))
			for i, k := range f.Params {
				params[i] = i32
				if k == 'I' {
					params[i] = i64
				}
			}
			fn := f.Fn
			b.NewFunctionBuilder().WithGoModuleFunction(wapi.GoModuleFunc(func(_ context.Context, mod wapi.Module, stack []uint64) {
				t, ok := e.tables.Load(mod)
				mem := mod.Memory()
				if !ok || mem == nil {
					stack[0] = errnoBadf // not an instance of e's (cannot be: Instantiate registers them all)
					return
				}
				fn(t.(*wasifs.Table), mem, stack)
			}), params, []wapi.ValueType{i32}).Export(f.Name)
		}
		_, err := b.Instantiate(ctx)
		return err
	}
	b.NewFunctionBuilder().WithGoFunction(wapi.GoFunc(func(_ context.Context, stack []uint64) {
		if fd := wapi.DecodeU32(stack[0]); fd <= 2 {
			stack[0] = errnoSuccess
		} else {
			stack[0] = errnoBadf
		}
	}), []wapi.ValueType{i32}, []wapi.ValueType{i32}).Export("fd_close")
	_, err := b.Instantiate(ctx)
	return err
}

// instantiateHostModule defines the "ptcx" module in wr.
func instantiateHostModule(ctx context.Context, wr wazero.Runtime, host []HostFunc) error {
	i32 := wapi.ValueTypeI32
	b := wr.NewHostModuleBuilder(abi.HostModule)
	for _, h := range host {
		params, results := make([]wapi.ValueType, h.Params), make([]wapi.ValueType, h.Results)
		for i := range params {
			params[i] = i32
		}
		for i := range results {
			results[i] = i32
		}
		fn := h.Fn
		b.NewFunctionBuilder().WithGoModuleFunction(wapi.GoModuleFunc(func(ctx context.Context, mod wapi.Module, stack []uint64) {
			fn(ctx, mod.Memory(), stack)
		}), params, results).Export(h.Name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// wazeroName names wazero and its version, for snapshots' header.
var wazeroName = func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/tetratelabs/wazero" {
				return "wazero " + m.Version
			}
		}
	}
	return "wazero (version not in the build info)"
}()

func (e *wazeroEngine) Name() string { return wazeroName }

type wazeroModule struct{ m wazero.CompiledModule }

func (m wazeroModule) Exports(name string) bool {
	_, ok := m.m.ExportedFunctions()[name]
	return ok
}

func (e *wazeroEngine) Compile(ctx context.Context, bin []byte) (Module, error) {
	m, err := e.wr.CompileModule(ctx, bin)
	if err != nil {
		return nil, err
	}
	return wazeroModule{m}, nil
}

func (e *wazeroEngine) Instantiate(ctx context.Context, m Module, memory HostMemory, w *world.World, initialize bool) (Instance, error) {
	cfg := moduleConfig(w)
	if initialize && e.fsys == nil {
		cfg = cfg.WithStartFunctions(abi.ExportInitialize)
	}
	if memory != nil {
		ctx = experimental.WithMemoryAllocator(ctx, memory.Allocator())
	}
	mod, err := e.wr.InstantiateModule(ctx, m.(wazeroModule).m, cfg)
	if err != nil {
		return nil, err
	}
	if e.fsys == nil {
		return wazeroInstance{mod: mod}, nil
	}
	// The table is registered before _initialize runs: it opens files.
	inst := wazeroInstance{mod: mod, e: e, table: wasifs.New(e.fsys, e.mount)}
	e.tables.Store(mod, inst.table)
	if initialize {
		f := mod.ExportedFunction(abi.ExportInitialize)
		if f == nil {
			inst.Close(ctx)
			return nil, fmt.Errorf("the module does not export %s", abi.ExportInitialize)
		}
		if _, err := f.Call(ctx); err != nil {
			inst.Close(ctx)
			return nil, fmt.Errorf("%s: %w", abi.ExportInitialize, err)
		}
	}
	return inst, nil
}

// imageModule: wazero has no way to initialise a memory copy-on-write, so
// the variant has no data and cappedMemory maps or copies the image.
func (e *wazeroEngine) ImageModule(layout *wasmbin.Layout, memory []byte, globals []uint64) ([]byte, bool, error) {
	bin, err := layout.Variant(uint32(len(memory)/abi.PageSize), globals)
	return bin, false, err
}

func (e *wazeroEngine) Close(ctx context.Context) error {
	err := e.wr.Close(ctx)
	if e.cache != nil {
		err = errors.Join(err, e.cache.Close(ctx))
	}
	return err
}

// moduleConfig returns the configuration of one new instance: a WASI
// reactor with no arguments, environment, files or standard streams, whose
// clock and random source are w's (set per run, before the run reseeds the
// instance). No start function runs: a fresh instance adds _initialize, a
// restored one is past it.
func moduleConfig(w *world.World) wazero.ModuleConfig {
	return wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithWalltime(w.Walltime, sys.ClockResolution(1000)).
		WithNanotime(w.Nanotime, sys.ClockResolution(1)).
		WithRandSource(w)
}

// wazeroInstance is an instance on wazero; with a file system (e.fsys),
// table is its file table, registered in e.tables.
type wazeroInstance struct {
	mod   wapi.Module
	e     *wazeroEngine
	table *wasifs.Table
}

func (i wazeroInstance) Function(name string) Func {
	f := i.mod.ExportedFunction(name)
	switch {
	case f == nil:
		return nil
	case releasable(name):
		return &wazeroReleasable{mod: i.mod, name: name, f: f}
	}
	return f
}

// releasable reports whether the export's call engine is dropped while a
// run waits (parking, run.go): the exports a run calls once, before it first
// waits (reseeding a restored instance, staging the program, starting
// it), and ptcx_buffer, called only when the exchange buffer must grow.
// ptcx_resume and ptcx_timer, called at every outcome, stay bound.
func releasable(name string) bool {
	switch name {
	case abi.ExportRestored, abi.ExportCompile, abi.ExportLoad, abi.ExportStart, abi.ExportBuffer:
		return true
	}
	return false
}

// A Releaser is an export that can drop what the engine holds for it
// until its next call.
type Releaser interface{ Release() }

// wazeroReleasable is a releasable export. wazero gives every bound
// function a call engine of its own with a native stack (10 KiB, doubled
// as the guest's native frames deepen, and kept): ptcx_start's grows to
// 40 KiB compiling or starting a program, and a run parked on a call would
// hold it, and the others', for as long as it waits, never to call them
// again (a session's next program, or the next run of a recycled
// instance, does: the export is bound again then). A run that settles
// without waiting long (releaseAfter) keeps them bound, for the recycled
// instance's next run. It is used by the instance's goroutine, or by the
// run's parking while that goroutine waits.
type wazeroReleasable struct {
	mod  wapi.Module
	name string
	f    wapi.Function // nil once released, until the next call
}

// CallWithStack implements Func.
func (o *wazeroReleasable) CallWithStack(ctx context.Context, stack []uint64) error {
	if o.f == nil {
		if o.f = o.mod.ExportedFunction(o.name); o.f == nil {
			return fmt.Errorf("%w: %s", abi.ErrStaleGuest, o.name)
		}
	}
	return o.f.CallWithStack(ctx, stack)
}

// Released reports whether f is a releasable export (Releaser), and
// whether what the engine holds for it is dropped now (for tests).
func Released(f Func) (releasable, released bool) {
	if o, ok := f.(*wazeroReleasable); ok {
		return true, o.f == nil
	}
	return false, false
}

// Release implements Releaser.
func (o *wazeroReleasable) Release() { o.f = nil }

func (i wazeroInstance) Memory() Memory {
	if m := i.mod.Memory(); m != nil {
		return m
	}
	return nil
}

func (i wazeroInstance) Global(name string) Global {
	if g := i.mod.ExportedGlobal(name); g != nil {
		return wazeroGlobal{g}
	}
	return nil
}

// limitMemory: cappedMemory's limit is what its Reallocate checks, which
// the caller lowers itself.
func (i wazeroInstance) LimitMemory(uint64) {}

// engineMemory is nil: wazero's memories are the host's (cappedMemory).
func (i wazeroInstance) EngineMemory() []byte { return nil }

func (i wazeroInstance) Close(ctx context.Context) {
	if i.table != nil {
		i.e.tables.Delete(i.mod)
		i.table.Reset()
	}
	_ = i.mod.Close(context.WithoutCancel(ctx))
}

// FileTable: an instance with a file system (NewWazeroFS) has one; without,
// Files is nil, ResetFiles does nothing and RestoreFiles takes no file.
func (i wazeroInstance) Files() []wasifs.File {
	if i.table == nil {
		return nil
	}
	return i.table.Files()
}

func (i wazeroInstance) ResetFiles() {
	if i.table != nil {
		i.table.Reset()
	}
}

func (i wazeroInstance) RestoreFiles(files []wasifs.File) error {
	if i.table == nil {
		if len(files) > 0 {
			return errors.New("wasmhost: the instance has no file system to open files in")
		}
		return nil
	}
	return i.table.Restore(files)
}

type wazeroGlobal struct{ g wapi.Global }

func (g wazeroGlobal) Get() uint64 { return g.g.Get() }

func (g wazeroGlobal) Set(v uint64) bool {
	mg, ok := g.g.(wapi.MutableGlobal)
	if ok {
		mg.Set(v)
	}
	return ok
}
