package wasmhost

import (
	"context"
	"fmt"
	"github.com/ptcx/ptcx/wasmhost/internal/wasmbin"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
	"os"
	"strings"
)

// The WebAssembly engines a Runtime can run the guest on (Config.WithEngine).
// Both run the same metered guest, with the same host imports, ABI and
// limits: compute time is measured by the loop meter's poll import
// (meter.go), which does not depend on the engine; memory by a cap on the
// instance's linear memory; output and calls by the host functions.
const (
	// EngineWazero is wazero's compiler: pure Go, no cgo, in every build
	// (the default).
	EngineWazero = "wazero"
	// EngineWasmtime is wasmtime (Cranelift), through cgo: in builds with
	// the wasmtime build tag only (go build -tags wasmtime). Its code runs
	// JavaScript several times faster; its start-up and nested calls cost
	// more (docs/engines.md).
	EngineWasmtime = "wasmtime"
)

// Engines returns the names of the engines this build can run, the
// default first.
func Engines() []string {
	if wasmtimeBuilt {
		return []string{EngineWazero, EngineWasmtime}
	}
	return []string{EngineWazero}
}

// defaultEngine is the engine of NewConfig: EngineEnv's (fromEnv), else
// wazero.
func defaultEngine() (name string, fromEnv bool) {
	if name := os.Getenv(EngineEnv); name != "" {
		return name, true
	}
	return EngineWazero, false
}

// CheckEngineEnv checks the engine EngineEnv names, which NewConfig's
// configuration runs on: nil when it is not set or this build can run it,
// else CheckEngine's error saying where the name came from (New's error for
// that configuration). A command that takes an engine from its flags checks
// it up front with this when none was given.
func CheckEngineEnv() error {
	if name, fromEnv := defaultEngine(); fromEnv {
		return checkEnvEngine(name)
	}
	return nil
}

// checkEnvEngine is CheckEngine for a name EngineEnv gave.
func checkEnvEngine(name string) error {
	if err := CheckEngine(name); err != nil {
		return &envEngineError{name: name, err: err}
	}
	return nil
}

// envEngineError is CheckEngine's error for a name EngineEnv gave.
type envEngineError struct {
	name string
	err  error
}

func (e *envEngineError) Error() string {
	return fmt.Sprintf("wasmhost: the environment's %s=%s: %s", EngineEnv, e.name, strings.TrimPrefix(e.err.Error(), "wasmhost: "))
}

func (e *envEngineError) Unwrap() error { return e.err }

// CheckEngine reports whether this build can run the engine name: nil,
// ErrNoWasmtime for EngineWasmtime in a build without it, or an error
// naming the engines there are.
func CheckEngine(name string) error {
	switch name {
	case EngineWazero:
		return nil
	case EngineWasmtime:
		if !wasmtimeBuilt {
			return ErrNoWasmtime
		}
		return nil
	}
	return fmt.Errorf("wasmhost: unknown engine %q: the engines are %s (this build has %s)", name,
		strings.Join([]string{EngineWazero, EngineWasmtime}, " and "), strings.Join(Engines(), " and "))
}

// newEngine returns the engine named name, whose memories are capped at
// memoryBytes.
func newEngine(ctx context.Context, name string, memoryBytes int64, cacheDir string) (engine, error) {
	if err := CheckEngine(name); err != nil {
		return nil, err
	}
	if name == EngineWasmtime {
		return newWasmtimeEngine(ctx, memoryBytes, cacheDir)
	}
	return newWazeroEngine(ctx, memoryBytes, cacheDir)
}

// engine is a WebAssembly engine with the host imports defined (WASI's
// and the ptcx module, hostfuncs.go). It is the seam between the host and
// the engine: everything else in the package speaks to instances through
// the interfaces below. An engine is safe for concurrent use; its instances
// are used by one goroutine at a time.
type engine interface {
	// name is the engine's name and version, as a snapshot's header
	// records it ("wazero v1.12.0").
	name() string
	// compile compiles a guest module.
	compile(ctx context.Context, bin []byte) (engineModule, error)
	// instantiate creates an instance of m whose clock and random source
	// are w's and whose linear memory is memory (nil: the engine's own,
	// capped at the engine's limit), and runs _initialize when initialize
	// is set. The instance's memory starts with memory.image's bytes when
	// there is one.
	instantiate(ctx context.Context, m engineModule, memory *cappedMemory, w *world.World, initialize bool) (engineInstance, error)
	// imageModule returns the module an image restores into (image.go),
	// for the module of layout, an image of memory and the mutable
	// globals' values, and whether the module itself holds the image's
	// memory (then the engine initialises a restored memory with it, copy
	// on write; else the host maps or copies it, cappedMemory).
	imageModule(layout *wasmbin.Layout, memory []byte, globals []uint64) (bin []byte, holdsMemory bool, err error)
	// close releases the engine, its modules and instances.
	close(ctx context.Context) error
}

// engineModule is a compiled module.
type engineModule interface {
	// exports reports whether the module exports a function named name.
	exports(name string) bool
}

// engineInstance is one module instance.
type engineInstance interface {
	// function returns the exported function name, or nil.
	function(name string) guestFunc
	// memory returns the exported memory, or nil.
	memory() guestMemory
	// global returns the exported global name, or nil.
	global(name string) guestGlobal
	// limitMemory sets the cap of the instance's memory to limit bytes, at
	// most the limit it was made for (a session's next run may have a
	// higher one than its last).
	limitMemory(limit uint64)
	// engineMemory returns the bytes of the instance's linear memory when
	// the engine allocated it (wasmtime; valid until the memory grows or
	// the instance closes), nil when the host did (cappedMemory.buf).
	engineMemory() []byte
	// close discards the instance and its memory.
	close(ctx context.Context)
}

// guestFunc is an exported function. CallWithStack takes the parameters in
// stack and leaves the results there, as wazero's api.Function does (which
// is one, unwrapped: the hot path of the wazero engine has no extra call).
type guestFunc interface {
	CallWithStack(ctx context.Context, stack []uint64) error
}

// guestMemory is an instance's linear memory; wazero's api.Memory is one.
// Every method checks its range and reports false outside the memory.
type guestMemory interface {
	Size() uint32
	Read(offset, byteCount uint32) ([]byte, bool)
	Write(offset uint32, v []byte) bool
	ReadUint32Le(offset uint32) (uint32, bool)
	Grow(deltaPages uint32) (previousPages uint32, ok bool)
}

// guestGlobal is an exported global, read and written as its raw bits.
type guestGlobal interface {
	Get() uint64
	// Set reports false when the global is not mutable.
	Set(v uint64) bool
}

// hostImport is one function of the ptcx import module: its parameters
// and results are all i32.
type hostImport struct {
	name            string
	params, results int
	fn              func(ctx context.Context, mem guestMemory, stack []uint64)
}

// hostImports are the functions of the ptcx import module (docs/abi.md).
var hostImports = []hostImport{
	{"call", 4, 1, hostCall},
	{"log", 3, 0, hostLog},
	{"timer_set", 1, 1, hostTimerSet},
	{"timer_clear", 1, 0, hostTimerClear},
	{"result", 2, 0, hostResult},
	{"error", 2, 0, hostError},
	{"poll", 0, 1, hostPoll},
}
