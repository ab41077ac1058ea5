package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ptcx/ptcx/wasmhost"
)

// engineFlag registers --engine, the sandbox's WebAssembly engine, checked
// when parsed: an engine this build does not have is a usage error.
func engineFlag(fs *flag.FlagSet, engine *string) {
	fs.Var((*engineValue)(engine), "engine", "the sandbox's WebAssembly `ENGINE`: "+strings.Join(wasmhost.Engines(), " or ")+
		" (default wazero, or $"+wasmhost.EngineEnv+"; wasmtime needs a build with -tags wasmtime)")
}

// engineValue is --engine's value: "" until set.
type engineValue string

func (e *engineValue) String() string { return string(*e) }

func (e *engineValue) Set(name string) error {
	if err := wasmhost.CheckEngine(name); err != nil {
		return err
	}
	*e = engineValue(name)
	return nil
}

// checkEngineEnv checks the engine $PTCX_ENGINE names, which a command runs
// on when neither --engine nor (ptcx serve) its config names one: a name
// this build cannot run is then a usage error before anything starts, as
// --engine's is, instead of a failed run_code once a program runs.
func checkEngineEnv() error {
	name := os.Getenv(wasmhost.EngineEnv)
	if name == "" {
		return nil
	}
	if err := wasmhost.CheckEngine(name); err != nil {
		return fmt.Errorf("$%s=%s: %w", wasmhost.EngineEnv, name, err)
	}
	return nil
}
