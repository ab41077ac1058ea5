// Command ptcx runs tool calls — and TypeScript programs of tool calls — the
// way an agent host would: through the registry, the executor and the
// WebAssembly sandbox. See `ptcx help`. The command line itself is package
// cmd/ptcx/internal/cli.
package main

import (
	"os"

	"github.com/ptcx/ptcx/cmd/ptcx/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	os.Exit(cli.Run(version, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
