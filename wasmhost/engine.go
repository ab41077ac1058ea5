package wasmhost

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ptcx/ptcx/wasmhost/internal/engine"
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
	// EngineWasmtime is wasmtime (Cranelift), through cgo: in builds that
	// link its adapter, a module of its own, only (scripts/wasmtime.sh
	// build; docs/engines.md). Its code runs
	// JavaScript several times faster; its start-up and nested calls cost
	// more (docs/engines.md).
	EngineWasmtime = "wasmtime"
)

// Engines returns the names of the engines this build can run, the
// default first.
func Engines() []string {
	return engine.Names()
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
		if _, ok := engine.Lookup(name); !ok {
			return ErrNoWasmtime
		}
		return nil
	}
	return fmt.Errorf("wasmhost: unknown engine %q: the engines are %s (this build has %s)", name,
		strings.Join([]string{EngineWazero, EngineWasmtime}, " and "), strings.Join(Engines(), " and "))
}

// newEngine returns the engine named name, whose memories are capped at
// memoryBytes.
func newEngine(ctx context.Context, name string, memoryBytes int64, cacheDir string) (engine.Engine, error) {
	if err := CheckEngine(name); err != nil {
		return nil, err
	}
	f, _ := engine.Lookup(name)
	return f(ctx, memoryBytes, cacheDir, hostImports)
}

// hostImports are the functions of the ptcx import module (docs/abi.md).
var hostImports = []engine.HostFunc{
	{Name: "call", Params: 4, Results: 1, Fn: hostCall},
	{Name: "log", Params: 3, Results: 0, Fn: hostLog},
	{Name: "timer_set", Params: 1, Results: 1, Fn: hostTimerSet},
	{Name: "timer_clear", Params: 1, Results: 0, Fn: hostTimerClear},
	{Name: "result", Params: 2, Results: 0, Fn: hostResult},
	{Name: "error", Params: 2, Results: 0, Fn: hostError},
	{Name: "poll", Params: 0, Results: 1, Fn: hostPoll},
}
