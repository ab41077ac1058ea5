package wasmtime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
	"github.com/ptcx/ptcx/wasmhost/internal/wasmbin"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// wasmtimeEngine runs the guest on wasmtime (Cranelift) through cgo. One
// wasmtime engine and one linker, with the host imports defined once and
// store-independent, serve every Runtime of the process; each instance has
// a store of its own, whose context the imports find their instance's state
// (wasmtimeState) by (wasmtimeStores). Memory is capped by the store's limiter; compute time
// is the loop meter's, as on wazero (the guest polls the host), so no
// epoch interruption or fuel is needed.
type wasmtimeEngine struct {
	memoryBytes int64
	cacheDir    string // where compiled modules are kept, "" for none
	// fsys, when set, is mounted read-only at mount in every instance
	// (NewFS); nil: instances have no file system.
	fsys  fs.FS
	mount string
}

// wasmtimeStack is the native stack the guest's wasm frames may take. The
// guest's C stack is in its linear memory, where QuickJS checks its own
// limit (a RangeError the program can catch); the wasm frames of a deep
// recursion need more than wasmtime's default 512 KiB before QuickJS's
// limit is reached (2 MiB is not enough, 4 MiB is). It must stay below
// the native stack of the threads that call into the guest: 8 MiB, the
// default thread stack on Linux (ulimit -s 8192).
const wasmtimeStack = 4 << 20

// The process's wasmtime engine and linker, and the modules compiled so far
// (by SHA-256 of the binary): compiling the guest with Cranelift takes
// seconds, so every Runtime shares them. The linker's host imports are the
// host functions of the first engine made (wasmhost hands every one the
// same).
var (
	sharedOnce sync.Once
	shared     *wasmtimeCore
	sharedErr  error
)

// wasmtimeShared returns the process's core, made at the first call with
// host as the host import module.
func wasmtimeShared(host ...engine.HostFunc) (*wasmtimeCore, error) {
	sharedOnce.Do(func() { shared, sharedErr = newCore(host) })
	return shared, sharedErr
}

// newCore makes the process's wasmtime engine and linker.
func newCore(host []engine.HostFunc) (*wasmtimeCore, error) {
	cfg := wasmtime.NewConfig()
	cfg.SetMemoryInitCOWSet(true)
	cfg.SetMaxWasmStack(wasmtimeStack)
	// Cranelift's defaults, set to say they were chosen (measured in
	// docs/performance-notebook.md, "compute_loop on wasmtime"): code optimised for
	// speed (OptLevelNone and OptLevelSpeedAndSize ran compute_loop within
	// the noise of it, 10 alternated rounds: the interpreter's time is not
	// in what the optimiser changes); NaNs not canonicalised (as on
	// wazero); functions compiled in parallel. Memories keep wasmtime's
	// default reservation, 4 GiB and a 32 MiB guard, so Cranelift emits no
	// bounds check for the guest's 32-bit loads and stores: a 256 MiB
	// reservation, which needs them, made compute_loop 1.2x slower. No
	// epoch interruption: the meter already brings the guest back to the
	// host, and epochs in its place were no faster on compute_loop and
	// made a trivial run 1.08x slower (RATIONALE.md).
	cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
	cfg.SetCraneliftNanCanonicalization(false)
	cfg.SetParallelCompilation(true)
	eng := wasmtime.NewEngineWithConfig(cfg)
	c := &wasmtimeCore{engine: eng, linker: wasmtime.NewLinker(eng), modules: map[[32]byte]*wasmtime.Module{}}
	if err := c.defineImports(host); err != nil {
		return nil, fmt.Errorf("wasmhost: wasmtime: define the host imports: %w", err)
	}
	return c, nil
}

type wasmtimeCore struct {
	engine  *wasmtime.Engine
	linker  *wasmtime.Linker
	mu      sync.Mutex
	modules map[[32]byte]*wasmtime.Module
}

// Name is the engine's name in the registry (engine.Lookup).
const Name = "wasmtime"

func init() {
	engine.Register(Name, New)
	engine.RegisterFS(Name, NewFS)
}

// New makes the wasmtime engine (an engine.Factory).
func New(_ context.Context, memoryBytes int64, cacheDir string, host []engine.HostFunc) (engine.Engine, error) {
	if _, err := wasmtimeShared(host...); err != nil {
		return nil, err
	}
	if cacheDir != "" {
		cacheDir = filepath.Join(cacheDir, "wasmtime", strings.ReplaceAll(wasmtimeName, " ", "-"))
	}
	return &wasmtimeEngine{memoryBytes: memoryBytes, cacheDir: cacheDir}, nil
}

// NewFS returns the factory of a wasmtime engine whose instances see fsys,
// read-only, at mount (an engine.FSFactory): package wasifs's file
// functions on a table per store (wasmtimeState.files).
func NewFS(fsys fs.FS, mount string) engine.Factory {
	return func(ctx context.Context, memoryBytes int64, cacheDir string, host []engine.HostFunc) (engine.Engine, error) {
		e, err := New(ctx, memoryBytes, cacheDir, host)
		if err != nil {
			return nil, err
		}
		we := e.(*wasmtimeEngine)
		we.fsys, we.mount = fsys, mount
		return we, nil
	}
}

// wasmtimeName names wasmtime-go and its version, for snapshots' header.
var wasmtimeName = func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/bytecodealliance/wasmtime-go/v39" {
				return "wasmtime-go " + m.Version
			}
		}
	}
	return "wasmtime-go (version not in the build info)"
}()

func (e *wasmtimeEngine) Name() string { return wasmtimeName }

type wasmtimeModule struct {
	m         *wasmtime.Module
	exportSet map[string]bool // exported functions
}

func (m *wasmtimeModule) Exports(name string) bool { return m.exportSet[name] }

// compile compiles bin, or takes it from the process's modules or the
// cache directory, and leaves it in the cache directory.
func (e *wasmtimeEngine) Compile(_ context.Context, bin []byte) (engine.Module, error) {
	core, _ := wasmtimeShared()
	key := sha256.Sum256(bin)
	var path string
	if e.cacheDir != "" {
		path = filepath.Join(e.cacheDir, hex.EncodeToString(key[:])+".cwasm")
	}
	core.mu.Lock()
	defer core.mu.Unlock()
	m := core.modules[key]
	if m == nil {
		var err error
		if m, err = load(core, path, bin); err != nil {
			return nil, err
		}
		core.modules[key] = m
	}
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			store(m, path)
		}
	}
	wm := &wasmtimeModule{m: m, exportSet: map[string]bool{}}
	for _, ex := range m.Exports() {
		if ex.Type().FuncType() != nil {
			wm.exportSet[ex.Name()] = true
		}
	}
	return wm, nil
}

// load compiles bin, or deserialises the module at path ("" for none)
// that this wasmtime compiled before: tens of ms instead of seconds. A
// file that cannot be used is compiled again, and replaced.
func load(core *wasmtimeCore, path string, bin []byte) (*wasmtime.Module, error) {
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			if m, err := wasmtime.NewModuleDeserialize(core.engine, b); err == nil {
				return m, nil
			}
			_ = os.Remove(path)
		}
	}
	return wasmtime.NewModule(core.engine, bin)
}

// store writes the compiled module m to path, atomically. The cache is an
// optimisation: failing to write it is not an error (the next start
// compiles again).
func store(m *wasmtime.Module, path string) {
	b, err := m.Serialize()
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if os.WriteFile(tmp, b, 0o644) != nil || os.Rename(tmp, path) != nil {
		_ = os.Remove(tmp)
	}
}

// wasmtimeState is what the host imports need of one instance.
type wasmtimeState struct {
	ctx    context.Context // the context of the export call in progress
	world  *world.World
	memory *wasmtime.Memory
	// callerMem is the memory the import being called sees.
	callerMem callerMemory
	// panicked is what an import panicked with (errStop, when the host
	// stops the guest), which trapped the guest, until the call into the
	// guest that ran it raises it as an error (wasmtimeCall).
	panicked any
	// files is the instance's file table when its engine has a file
	// system (NewFS), else nil.
	files *wasifs.Table
}

type wasmtimeInstance struct {
	store  *wasmtime.Store
	inst   *wasmtime.Instance
	state  *wasmtimeState
	mem    *wasmtimeMemory
	capped engine.HostMemory // nil for an instance with the engine's own memory
	limit  uint64
}

func (e *wasmtimeEngine) Instantiate(ctx context.Context, m engine.Module, memory engine.HostMemory, w *world.World, initialize bool) (engine.Instance, error) {
	core, _ := wasmtimeShared()
	st := &wasmtimeState{ctx: ctx, world: w}
	if e.fsys != nil {
		st.files = wasifs.New(e.fsys, e.mount)
	}
	store := wasmtime.NewStore(core.engine)
	if err := register(store, st); err != nil {
		store.Close()
		return nil, err
	}
	limit := uint64(abi.MemoryPages(e.memoryBytes)) * abi.PageSize
	if memory != nil {
		limit = min(limit, memory.Limit())
		memory.SetLimit(limit)
	}
	store.Limiter(int64(limit), -1, -1, -1, -1)
	i := &wasmtimeInstance{store: store, state: st, capped: memory, limit: limit}
	var inst *wasmtime.Instance
	err := wasmtimeCall(st, func() (err error) {
		inst, err = core.linker.Instantiate(store, m.(*wasmtimeModule).m)
		return err
	})
	if err != nil {
		unregister(store)
		store.Close()
		return nil, err
	}
	i.inst = inst
	if ex := inst.GetExport(store, "memory"); ex != nil && ex.Memory() != nil {
		st.memory = ex.Memory()
		i.mem = &wasmtimeMemory{mem: st.memory, store: store}
	}
	if memory != nil && memory.Image() != nil {
		img := memory.Image()
		if i.mem == nil || uint64(i.mem.Size()) < uint64(len(img.Memory)) {
			i.Close(ctx)
			return nil, fmt.Errorf("wasmhost: the restored memory is smaller than the image's %d bytes", len(img.Memory))
		}
		if img.InModule {
			// wasmtime maps the module's data, the image, copy-on-write,
			// where it can (Config.SetMemoryInitCOWSet); where it did
			// not, it copied it, and a reset compares every block with
			// the image's and an idle instance is not cooled
			// (pool_recycle.go).
			memory.SetCOW(vmem.MapsImage(st.memory.UnsafeData(store)[:len(img.Memory)], img.Filled))
		} else {
			// The variant module's memory starts at the image's size,
			// zeroed: the image is copied in.
			copy(st.memory.UnsafeData(store), img.Memory)
		}
	}
	// A module without _initialize has nothing to initialise (wazero
	// skips a start function that is not exported too).
	if f := i.Function(abi.ExportInitialize); initialize && f != nil {
		var stack [1]uint64
		if err := f.CallWithStack(ctx, stack[:]); err != nil {
			i.Close(ctx)
			return nil, fmt.Errorf("wasmhost: %s: %w", abi.ExportInitialize, err)
		}
	}
	return i, nil
}

func (e *wasmtimeEngine) Close(context.Context) error { return nil }

// imageModule returns the variant module with the image as its data, in
// segments of the image's non-zero runs of 4 KiB (wasmbin.WithData): wasmtime
// turns a module's data into a memory image once, and maps it
// copy-on-write into every instance (Config.SetMemoryInitCOWSet), so a
// restored instance shares the image's pages until it writes them, as
// wazero's do through cappedMemory's mapping.
func (e *wasmtimeEngine) ImageModule(layout *wasmbin.Layout, memory []byte, globals []uint64) ([]byte, bool, error) {
	bin, err := layout.Variant(uint32(len(memory)/abi.PageSize), globals)
	if err != nil {
		return nil, false, err
	}
	out, err := wasmbin.WithData(bin, memory)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

func (i *wasmtimeInstance) Function(name string) engine.Func {
	ex := i.inst.GetExport(i.store, name)
	if ex == nil || ex.Func() == nil {
		return nil
	}
	f := ex.Func()
	ty := f.Type(i.store)
	wf := &wasmtimeFunc{i: i}
	for _, r := range ty.Results() {
		wf.resultI64 = r.Kind() == wasmtime.KindI64
	}
	wf.raw, wf.err = newRawFunc(i.store, f, len(ty.Params()), len(ty.Results()))
	return wf
}

func (i *wasmtimeInstance) Memory() engine.Memory {
	if i.mem == nil {
		return nil
	}
	return i.mem
}

func (i *wasmtimeInstance) EngineMemory() []byte {
	if i.state.memory == nil || i.store == nil {
		return nil
	}
	return i.state.memory.UnsafeData(i.store)
}

func (i *wasmtimeInstance) Global(name string) engine.Global {
	ex := i.inst.GetExport(i.store, name)
	if ex == nil || ex.Global() == nil {
		return nil
	}
	return &wasmtimeGlobal{g: ex.Global(), store: i.store}
}

func (i *wasmtimeInstance) LimitMemory(limit uint64) {
	if limit != i.limit {
		i.limit = limit
		i.store.Limiter(int64(limit), -1, -1, -1, -1)
	}
}

// FileTable: an instance with a file system (NewFS) has one; without,
// Files is nil, ResetFiles does nothing and RestoreFiles takes no file.
func (i *wasmtimeInstance) Files() []wasifs.File {
	if i.state.files == nil {
		return nil
	}
	return i.state.files.Files()
}

func (i *wasmtimeInstance) ResetFiles() {
	if i.state.files != nil {
		i.state.files.Reset()
	}
}

func (i *wasmtimeInstance) RestoreFiles(files []wasifs.File) error {
	if i.state.files == nil {
		if len(files) > 0 {
			return errors.New("wasmhost: the instance has no file system to open files in")
		}
		return nil
	}
	return i.state.files.Restore(files)
}

func (i *wasmtimeInstance) Close(context.Context) {
	if i.state.files != nil {
		i.state.files.Reset()
	}
	if i.store != nil {
		unregister(i.store)
		i.store.Close()
		i.store = nil
	}
}

// wasmtimeFunc is an exported function; its parameters and results are
// i32 or i64 (the guest's exports are), at most one result.
type wasmtimeFunc struct {
	raw       rawFunc
	err       error // why raw cannot be called, returned by every call
	i         *wasmtimeInstance
	resultI64 bool
}

// errWasmtimeClosed is returned by a call of an instance that was closed
// (its store is gone).
var errWasmtimeClosed = errors.New("wasmhost: wasmtime: the instance was closed")

func (f *wasmtimeFunc) CallWithStack(ctx context.Context, stack []uint64) error {
	if f.err != nil {
		return f.err
	}
	if f.i.store == nil {
		return errWasmtimeClosed
	}
	st := f.i.state
	prev := st.ctx
	st.ctx = ctx
	m := f.i.mem
	if m != nil {
		m.enter()
	}
	defer func() {
		st.ctx = prev
		if m != nil {
			m.leave()
		}
	}()
	err := wasmtimeCall(st, func() error { return f.raw.call(stack) })
	if err != nil {
		if c := f.i.capped; c != nil && f.i.mem != nil && uint64(f.i.mem.Size())+abi.PageSize > f.i.limit {
			// The guest trapped with its memory at its limit: a growth
			// was refused (wasmtime does not say; its limiter refuses
			// growth past the limit, which memory.grow reports as -1).
			c.Refuse()
		}
		return err
	}
	if f.raw.results > 0 && !f.resultI64 {
		stack[0] = uint64(uint32(stack[0]))
	}
	return nil
}

// wasmtimeCall runs f, which calls into the guest, and turns what the guest
// or an import raised into an error: a panic of an import (errStop), which
// the import turned into a trap and kept in st (wasmtimeCore.define), or a
// trap, named as wazero names it so that the host classifies both alike
// (trapError).
func wasmtimeCall(st *wasmtimeState, f func() error) error {
	err := f()
	if p := st.panicked; p != nil {
		st.panicked = nil
		if e, ok := p.(error); ok {
			return fmt.Errorf("wasmhost: an import stopped the guest: %w", e)
		}
		return fmt.Errorf("wasmhost: an import panicked: %v", p)
	}
	var trap *wasmtime.Trap
	if errors.As(err, &trap) {
		return &wasmtimeTrap{msg: trapMessage(trap.Code(), trap.Message()), cause: err}
	}
	return err
}

// wasmtimeTrap is a trap of the guest, worded as wazero's are.
type wasmtimeTrap struct {
	msg   string
	cause error // wasmtime-go's trap, or nil for a call's (rawFunc)
}

func (t *wasmtimeTrap) Error() string { return "wasm error: " + t.msg }
func (t *wasmtimeTrap) Unwrap() error { return t.cause }

// trapMessage names a trap of code c (nil for none) and message msg as
// wazero does.
func trapMessage(c *wasmtime.TrapCode, msg string) string {
	if c != nil {
		switch *c {
		case wasmtime.StackOverflow:
			return "stack overflow"
		case wasmtime.MemoryOutOfBounds, wasmtime.HeapMisaligned:
			return "out of bounds memory access"
		case wasmtime.TableOutOfBounds, wasmtime.IndirectCallToNull:
			return "invalid table access"
		case wasmtime.BadSignature:
			return "indirect call type mismatch"
		case wasmtime.IntegerOverflow:
			return "integer overflow"
		case wasmtime.IntegerDivisionByZero:
			return "integer divide by zero"
		case wasmtime.BadConversionToInteger:
			return "invalid conversion to integer"
		case wasmtime.UnreachableCodeReached:
			return "unreachable"
		}
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return strings.TrimPrefix(msg, "wasm trap: ")
}

// wasmtimeMemory is a linear memory seen through a store. Its data is
// looked up (four cgo calls) at the first access after a call into the
// guest, whose growth may move it, and kept until the next: a run's host
// side reads and writes it several times between two calls. (An import
// sees callerMemory.)
type wasmtimeMemory struct {
	mem   *wasmtime.Memory
	store wasmtime.Storelike
	data  []byte // the memory's bytes, when known
	known bool
	// inGuest counts the calls into the guest in progress: while one is,
	// nothing is kept (the guest may grow the memory at any point).
	inGuest int
}

func (m *wasmtimeMemory) bytes() []byte {
	if m.known {
		return m.data
	}
	data := m.mem.UnsafeData(m.store)
	if m.inGuest == 0 {
		m.data, m.known = data, true
	}
	return data
}

// enter and leave bracket a call into the guest.
func (m *wasmtimeMemory) enter() { m.inGuest++; m.data, m.known = nil, false }
func (m *wasmtimeMemory) leave() { m.inGuest--; m.data, m.known = nil, false }

func (m *wasmtimeMemory) Size() uint32 { return uint32(len(m.bytes())) }

func (m *wasmtimeMemory) Read(offset, n uint32) ([]byte, bool) {
	data := m.bytes()
	if uint64(offset)+uint64(n) > uint64(len(data)) {
		return nil, false
	}
	return data[offset : offset+n : offset+n], true
}

func (m *wasmtimeMemory) Write(offset uint32, v []byte) bool {
	data := m.bytes()
	if uint64(offset)+uint64(len(v)) > uint64(len(data)) {
		return false
	}
	copy(data[offset:], v)
	return true
}

func (m *wasmtimeMemory) ReadUint32Le(offset uint32) (uint32, bool) {
	b, ok := m.Read(offset, 4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (m *wasmtimeMemory) Grow(delta uint32) (uint32, bool) {
	m.data, m.known = nil, false
	prev, err := m.mem.Grow(m.store, uint64(delta))
	if err != nil {
		return 0, false
	}
	return uint32(prev), true
}

type wasmtimeGlobal struct {
	g     *wasmtime.Global
	store *wasmtime.Store
}

func (g *wasmtimeGlobal) Get() uint64 {
	v := g.g.Get(g.store)
	if v.Kind() == wasmtime.KindI64 {
		return uint64(v.I64())
	}
	return uint64(uint32(v.I32()))
}

func (g *wasmtimeGlobal) Set(v uint64) bool {
	ty := g.g.Type(g.store)
	if !ty.Mutable() {
		return false
	}
	val := wasmtime.ValI32(int32(uint32(v)))
	if ty.Content().Kind() == wasmtime.KindI64 {
		val = wasmtime.ValI64(int64(v))
	}
	return g.g.Set(g.store, val) == nil
}
