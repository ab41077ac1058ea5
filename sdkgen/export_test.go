package sdkgen

import (
	"testing"

	"github.com/ptcx/ptcx/api"
)

// Bridges from the internal test data to the external tests of package sdkgen_test, which may
// import the registry, the executor and the sandbox (sdkgen itself must not: they import it).

// LoadTools reads a JSON array of tools from testdata.
var LoadTools = loadTools

// Program is a sample run_code program over testdata/tools.json.
type Program struct {
	Name string
	Body string
	// Route is the tool a route example calls; empty for any other program.
	Route string
}

// TypeCheckedPrograms returns every program TestDeclarations_typeCheck_programs requires to
// type-check against the declarations for tools: the good programCases, the bash example of the
// SDK section and the route example of every tool.
func TypeCheckedPrograms(t testing.TB, tools []api.Schema) []Program {
	t.Helper()
	var out []Program
	routes := map[string]string{}
	for _, tool := range tools {
		routes["route_"+tool.Name] = tool.Name
	}
	for _, c := range append(append([]programCase(nil), programCases...), exampleCases(t, tools)...) {
		if c.wantCode == "" {
			out = append(out, Program{Name: c.name, Body: c.body, Route: routes[c.name]})
		}
	}
	return out
}

// TSCDiag is one diagnostic tsc printed.
type TSCDiag = tscDiag

// RunTSC type-checks files in one compiler run (runTSC) and returns the diagnostics by file name.
var RunTSC = runTSC

// AsModule wraps a declaration block and a program body into one self-contained module.
var AsModule = asModule
