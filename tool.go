package ptcx

import (
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/registry"
)

// Tool is a tool definition: written by hand with raw JSON Schemas (as
// registry.Tool, whose fields these are), or built from a Go function by
// Func. The zero values of the optional fields mean: input {"type":
// "object"}, no output schema, exclusive scheduling, no timeout, no
// finalizer.
type Tool struct {
	// Name matches ^[A-Za-z_][A-Za-z0-9_.-]{0,63}$ and is not "run_code".
	Name        string
	Description string
	// InputSchema is a JSON Schema with "type": "object".
	InputSchema json.RawMessage
	// OutputSchema, when set, is checked against every successful value
	// (INVALID_TOOL_OUTPUT) and types the tool's result in the SDK.
	OutputSchema json.RawMessage
	// ConcurrencySafe tools may overlap with each other inside a program.
	ConcurrencySafe bool
	// Timeout, when positive, bounds one run of Body (TOOL_TIMEOUT).
	Timeout  time.Duration
	Body     Body
	Finalize Finalizer

	err error // why Func could not build the tool; reported at registration
}

// RegistryTool returns t as the registry declares tools, for a host that
// registers it with the registry package directly (on a scope of its own,
// say). The error is the one Func met building t.
func (t Tool) RegistryTool() (registry.Tool, error) {
	if t.err != nil {
		return registry.Tool{}, t.err
	}
	return registry.Tool{
		Name:            t.Name,
		Description:     t.Description,
		InputSchema:     t.InputSchema,
		OutputSchema:    t.OutputSchema,
		ConcurrencySafe: t.ConcurrencySafe,
		Timeout:         t.Timeout,
		Body:            t.Body,
		Finalize:        t.Finalize,
	}, nil
}
