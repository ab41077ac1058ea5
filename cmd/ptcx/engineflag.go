package main

import (
	"flag"
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
