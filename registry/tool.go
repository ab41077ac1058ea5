package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/policy"
)

// Body runs a tool. ctx is the caller's context (with the tool's timeout, if
// it declared one); in.Args has already been validated against the input
// schema. An error that is an *Error keeps its Code; any other error becomes
// TOOL_FAILED with the error's text as its message.
type Body func(ctx context.Context, in api.Input) (api.Output, error)

// Finalizer is applied exactly once to the result of every execution that
// resolved to the tool (success or failure, including an aborted collapsed
// call), before the result is published. It returns the result to publish.
type Finalizer func(ctx context.Context, r api.Result) api.Result

// Tool is a tool definition as a host declares it: written by hand with raw
// JSON Schemas, or built from a Go function by ptcx.Func (ptcx.Tool is this
// type). The zero values of the optional fields mean: no output schema,
// exclusive scheduling, no timeout, no finalizer.
type Tool struct {
	// Name matches ^[A-Za-z_][A-Za-z0-9_.-]{0,63}$ and is not "run_code".
	Name        string
	Description string
	// InputSchema is a JSON Schema with "type": "object". Nil means
	// {"type": "object"} (any object).
	InputSchema json.RawMessage
	// OutputSchema, when set, is checked against every successful value
	// (INVALID_TOOL_OUTPUT) and typed in the generated SDK.
	OutputSchema json.RawMessage
	// ConcurrencySafe tools may overlap with each other inside one program;
	// any other tool runs alone.
	ConcurrencySafe bool
	// Timeout, when positive, bounds one run of Body (TOOL_TIMEOUT).
	Timeout  time.Duration
	Body     Body
	Finalize Finalizer
	// Policy is what the tool declares about the data that flows through
	// it and what a program may ask of it: its results' labels, what it
	// accepts, constraints, calls per run, cost (docs/security.md, "Data
	// flow"). The zero value declares nothing. It is checked and its
	// constraints compiled at registration (INVALID_DEFINITION naming the
	// tool and the member).
	Policy policy.Declaration
	// Err, when set, is why the tool could not be built, and what Register
	// returns for it: a function that builds tools (ptcx.Func) sets it when
	// it cannot, so that the failure is met where tools are registered.
	Err error
}

// RegistryTool returns t, or its Err.
//
// Deprecated: ptcx.Tool is registry.Tool now, so a tool ptcx.Func built
// needs no conversion: register it as it is (Register returns its Err).
func (t Tool) RegistryTool() (Tool, error) {
	if t.Err != nil {
		return Tool{}, t.Err
	}
	return t, nil
}

var toolName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether name is a well-formed tool name.
func ValidName(name string) bool { return toolName.MatchString(name) }

// compile turns a Tool into a Definition: the one place public input is
// checked and converted.
func compile(t Tool) (*resolve.Definition, error) {
	switch {
	case t.Err != nil:
		return nil, t.Err
	case t.Name == RunCode:
		return nil, api.Errorf(api.CodeInvalidDefinition, "%q is reserved: run_code is provided by the executor and cannot be registered", RunCode)
	case !ValidName(t.Name):
		return nil, api.Errorf(api.CodeInvalidDefinition, "invalid tool name %q: must match %s", t.Name, toolName)
	case t.Body == nil:
		return nil, api.Errorf(api.CodeInvalidDefinition, "tool %q has no body", t.Name)
	case t.Timeout < 0:
		return nil, api.Errorf(api.CodeInvalidDefinition, "tool %q has a negative timeout %v", t.Name, t.Timeout)
	}
	p, err := policy.Compile(t.Policy)
	if err != nil {
		return nil, &api.Error{Code: api.CodeInvalidDefinition, Message: fmt.Sprintf("tool %q: %v", t.Name, err), Cause: err}
	}
	in := t.InputSchema
	if len(in) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	d, err := resolve.New(api.Schema{
		Name:            t.Name,
		Description:     t.Description,
		InputSchema:     clone(in),
		OutputSchema:    clone(t.OutputSchema),
		ConcurrencySafe: t.ConcurrencySafe,
		Timeout:         t.Timeout,
		Handle:          t.Policy.Handle,
	}, t.Body, t.Finalize)
	if err != nil || p == nil {
		return d, err
	}
	return d.WithPolicy(p), nil
}

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}
