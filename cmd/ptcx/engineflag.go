package main

import (
	"flag"
	"strings"

	"github.com/ptcx/ptcx/wasmhost"
)

// engineFlag registers --engine, the sandbox's WebAssembly engine.
func engineFlag(fs *flag.FlagSet, engine *string) {
	fs.StringVar(engine, "engine", "", "the sandbox's WebAssembly `ENGINE`: "+strings.Join(wasmhost.Engines(), " or ")+
		" (default wazero, or $"+wasmhost.EngineEnv+"; wasmtime needs a build with -tags wasmtime)")
}
