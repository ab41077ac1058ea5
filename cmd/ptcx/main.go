// Command ptcx runs tool calls — and TypeScript programs of tool calls — the
// way an agent host would: through the registry, the executor and the
// WebAssembly sandbox. See `ptcx help`.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
