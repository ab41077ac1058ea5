// Package cli is the ptcx command line: its commands, their flags and the
// wiring of the library's packages behind them. Package main (cmd/ptcx) is
// only its entry point, as the go command's cmd/go is of cmd/go/internal/...:
// what the commands do is the library's, reached as any host reaches it.
package cli

import "io"

// Run runs ptcx with args (without the program's name) and returns its exit
// status. v is the build's version (ptcx version, the MCP server's
// serverInfo); empty, the module's build information says it.
func Run(v string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if v != "" {
		version = v
	}
	return run(args, stdin, stdout, stderr)
}
