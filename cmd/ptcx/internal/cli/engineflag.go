package cli

import (
	"flag"
	"strings"

	"github.com/ptcx/ptcx/wasmhost"
)

// engineFlag registers --engine, the sandbox's WebAssembly engine, checked
// when parsed: an engine this build does not have is a usage error.
func engineFlag(fs *flag.FlagSet, engine *string) {
	fs.Var((*engineValue)(engine), "engine", "the sandbox's WebAssembly `ENGINE`: "+strings.Join(wasmhost.Engines(), " or ")+
		" (default wazero, or $"+wasmhost.EngineEnv+"; wasmtime needs a build by scripts/wasmtime.sh)")
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

// engineEnvError is the error of a command whose engine was not chosen
// (chosen is "": no --engine, nor, for ptcx serve, an engine in its
// config) when $PTCX_ENGINE names one this build cannot run
// (wasmhost.CheckEngineEnv): a usage error before anything starts, as
// --engine's is, instead of a failed run_code once a program runs.
func engineEnvError(chosen string) error {
	if chosen != "" {
		return nil
	}
	return wasmhost.CheckEngineEnv()
}
