// Package engine is the seam between wasmhost and a WebAssembly engine: the
// interfaces wasmhost speaks to instances through, the host functions it
// hands an engine as values (HostFunc, as wazero's
// HostFunctionBuilder.WithGoModuleFunction takes them), and the engines a
// build has (Register, Lookup). The wazero adapter is in this package and
// always registered; the wasmtime adapter (package wasmtime under this one,
// a module of its own, in builds by scripts/wasmtime.sh) registers itself. An engine knows nothing
// of what the host functions do.
package engine

import (
	"context"
	"io/fs"
	"sort"
	"sync"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
	"github.com/ptcx/ptcx/wasmhost/internal/wasmbin"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// Engine is a WebAssembly engine with the host imports defined (WASI's
// and the ptcx module, hostfuncs.go). It is the seam between the host and
// the engine: everything else in the package speaks to instances through
// the interfaces below. An engine is safe for concurrent use; its instances
// are used by one goroutine at a time.
type Engine interface {
	// Name is the engine's name and version, as a snapshot's header
	// records it ("wazero v1.12.0").
	Name() string
	// Compile compiles a guest module.
	Compile(ctx context.Context, bin []byte) (Module, error)
	// Instantiate creates an instance of m whose clock and random source
	// are w's and whose linear memory is memory (nil: the engine's own,
	// capped at the engine's limit), and runs _initialize when initialize
	// is set. The instance's memory starts with memory.Image()'s bytes when
	// there is one.
	Instantiate(ctx context.Context, m Module, memory HostMemory, w *world.World, initialize bool) (Instance, error)
	// ImageModule returns the module an image restores into (wasmhost's image.go),
	// for the module of layout, an image of memory and the mutable
	// globals' values, and whether the module itself holds the image's
	// memory (then the engine initialises a restored memory with it, copy
	// on write; else the host maps or copies it, the HostMemory).
	ImageModule(layout *wasmbin.Layout, memory []byte, globals []uint64) (bin []byte, holdsMemory bool, err error)
	// Close releases the engine, its modules and instances.
	Close(ctx context.Context) error
}

// Module is a compiled module.
type Module interface {
	// Exports reports whether the module exports a function named name.
	Exports(name string) bool
}

// Instance is one module instance.
type Instance interface {
	// Function returns the exported function name, or nil.
	Function(name string) Func
	// Memory returns the exported memory, or nil.
	Memory() Memory
	// Global returns the exported global name, or nil.
	Global(name string) Global
	// LimitMemory sets the cap of the instance's memory to limit bytes, at
	// most the limit it was made for (a session's next run may have a
	// higher one than its last).
	LimitMemory(limit uint64)
	// EngineMemory returns the bytes of the instance's linear memory when
	// the engine allocated it (wasmtime; valid until the memory grows or
	// the instance closes), nil when the host did (the HostMemory.buf).
	EngineMemory() []byte
	// Close discards the instance and its memory.
	Close(ctx context.Context)
}

// FileTable is implemented by an Instance whose file system is the host's
// (package wasifs: NewWazeroFS): its open files, which the host resets
// when it recycles the instance and carries in a snapshot.
type FileTable interface {
	// Files returns the files the guest has open.
	Files() []wasifs.File
	// ResetFiles closes them all: the instance's table is a new one's.
	ResetFiles()
	// RestoreFiles resets the table and opens files; an error names the
	// entry that cannot be opened, and leaves the table empty.
	RestoreFiles(files []wasifs.File) error
}

// Func is an exported function. CallWithStack takes the parameters in
// stack and leaves the results there, as wazero's api.Function does (which
// is one, unwrapped: the hot path of the wazero engine has no extra call).
type Func interface {
	CallWithStack(ctx context.Context, stack []uint64) error
}

// Memory is an instance's linear memory; wazero's api.Memory is one.
// Every method checks its range and reports false outside the memory.
type Memory interface {
	Size() uint32
	Read(offset, byteCount uint32) ([]byte, bool)
	Write(offset uint32, v []byte) bool
	ReadUint32Le(offset uint32) (uint32, bool)
	Grow(deltaPages uint32) (previousPages uint32, ok bool)
}

// Global is an exported global, read and written as its raw bits.
type Global interface {
	Get() uint64
	// Set reports false when the global is not mutable.
	Set(v uint64) bool
}

// HostFunc is one function of the host's import module: its parameters
// and results are all i32; Fn reads them from stack and leaves its results
// there, with mem the calling instance's memory.
type HostFunc struct {
	Name            string
	Params, Results int
	Fn              func(ctx context.Context, mem Memory, stack []uint64)
}

// HostMemory is a linear memory the host has a say in: its cap, what a
// restored memory starts with, and (on wazero) the memory itself, which
// the host allocates.
type HostMemory interface {
	// Limit is the memory's cap in bytes; SetLimit lowers it to the
	// engine's own.
	Limit() uint64
	SetLimit(limit uint64)
	// Image is what a restored memory starts with, nil for a fresh one.
	Image() *Image
	// SetCOW records whether the image is mapped copy-on-write (not
	// copied) into the memory.
	SetCOW(cow bool)
	// Refuse records that a growth was refused: the memory reached its cap.
	Refuse()
	// Allocator hands out the host's memory to wazero.
	Allocator() experimental.MemoryAllocator
}

// Image is the initialised image a memory is restored from.
type Image struct {
	// Memory is the image's linear memory.
	Memory []byte
	// InModule says the module holds the image as its data (ImageModule's
	// holdsMemory), which the engine maps copy-on-write where it can.
	InModule bool
	// Filled lists the image's pages that are not all zeros
	// (vmem.FilledPages).
	Filled []uint32
}

// Factory makes an engine whose memories are capped at memoryBytes, whose
// compiled modules are cached in cacheDir ("" for none), and whose host
// import module holds host.
type Factory func(ctx context.Context, memoryBytes int64, cacheDir string, host []HostFunc) (Engine, error)

// FSFactory makes the factory of an engine whose instances see fsys,
// read-only, at mount (an absolute path): their one preopened directory
// and only file system, served by package wasifs's WASI file functions on
// a table per instance (FileTable). An engine that has none cannot run
// the Python guest.
type FSFactory func(fsys fs.FS, mount string) Factory

var (
	mu          sync.RWMutex
	factories   = map[string]Factory{Wazero: newWazero}
	fsFactories = map[string]FSFactory{Wazero: NewWazeroFS}
)

// Wazero is the name of the wazero engine, registered in every build.
const Wazero = "wazero"

// Register makes the engine name available (an adapter calls it from its
// init function). It panics when name is registered already.
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := factories[name]; ok {
		panic("engine: " + name + " registered twice")
	}
	factories[name] = f
}

// RegisterFS makes the engine name's FSFactory available (an adapter
// calls it from its init function, with Register). It panics when name
// has one already.
func RegisterFS(name string, f FSFactory) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := fsFactories[name]; ok {
		panic("engine: " + name + "'s file system registered twice")
	}
	fsFactories[name] = f
}

// LookupFS returns the FSFactory of the engine name, if this build has
// the engine and it has one.
func LookupFS(name string) (FSFactory, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := fsFactories[name]
	return f, ok
}

// Lookup returns the factory of the engine name, if this build has it.
func Lookup(name string) (Factory, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := factories[name]
	return f, ok
}

// Names returns the engines this build has, wazero first, then the others
// by name.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := []string{Wazero}
	for n := range factories {
		if n != Wazero {
			names = append(names, n)
		}
	}
	sort.Strings(names[1:])
	return names
}
