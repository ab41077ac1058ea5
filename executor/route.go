package executor

import (
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

// routeExample is a one-line example of the right route for a tool a model
// called directly in ptc mode: models refused without an example repeat the
// mistake.
func routeExample(s api.Schema) string {
	return sdkgen.RouteExample(SDKTool(s))
}

// SDKTool converts a registry schema to sdkgen's view of a tool.
func SDKTool(s api.Schema) sdkgen.Tool {
	return sdkgen.Tool{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema, OutputSchema: s.OutputSchema}
}

// SDKTools converts schemas, leaving out run_code (a program cannot call
// it).
func SDKTools(ss []api.Schema) []sdkgen.Tool {
	out := make([]sdkgen.Tool, 0, len(ss))
	for _, s := range ss {
		if s.Name != registry.RunCode {
			out = append(out, SDKTool(s))
		}
	}
	return out
}

// DescribeRunCode is a registry.Describer that gives run_code the generated
// SDK of the scope's bindable tools, so that a client that only sees
// run_code (an MCP client in ptc mode) still sees every binding's types.
// Install it with Registry.SetRunCodeDescriber.
func DescribeRunCode(scope string, bindable []api.Schema) string {
	decl, err := sdkgen.Declarations(SDKTools(bindable))
	if err != nil {
		return registry.DefaultRunCodeDescription
	}
	return registry.DefaultRunCodeDescription + "\n\nThe program's bindings:\n\n" + decl
}
