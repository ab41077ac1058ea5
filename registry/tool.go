package registry

import (
	"context"
	"encoding/json"
	"regexp"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ptcx/ptcx/api"
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

// Tool is a tool definition as a host declares it. The zero values of the
// optional fields mean: no output schema, exclusive scheduling, no timeout,
// no finalizer.
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
}

var toolName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether name is a well-formed tool name.
func ValidName(name string) bool { return toolName.MatchString(name) }

// Definition is a compiled tool: what the executor runs. It is immutable.
type Definition struct {
	schema   api.Schema
	in, out  *jsonschema.Schema
	quick    *quickSchema // vouches for simple arguments without in; nil when the schema is not simple
	body     Body
	finalize Finalizer
}

// Name returns the tool's name.
func (d *Definition) Name() string { return d.schema.Name }

// Schema returns the public view.
func (d *Definition) Schema() api.Schema { return d.schema }

// ConcurrencySafe reports the tool's scheduling class.
func (d *Definition) ConcurrencySafe() bool { return d.schema.ConcurrencySafe }

// Timeout returns the tool's declared timeout (0: none).
func (d *Definition) Timeout() time.Duration { return d.schema.Timeout }

// Transport reports whether d is the reserved run_code transport, whose body
// the executor supplies.
func (d *Definition) Transport() bool { return d.schema.Transport }

// Body returns the tool's body (nil for the transport).
func (d *Definition) Body() Body { return d.body }

// Finalizer returns the tool's finalizer, or nil.
func (d *Definition) Finalizer() Finalizer { return d.finalize }

// ValidateArgs checks decoded arguments against the input schema, listing
// every violation (INVALID_ARGS).
func (d *Definition) ValidateArgs(args map[string]any) *api.Error {
	if d.quick != nil && d.quick.valid(args) {
		return nil
	}
	return validate(d.in, args, api.CodeInvalidArgs, "arguments")
}

// ValidateOutput checks a value against the output schema, if the tool
// declared one (INVALID_TOOL_OUTPUT).
func (d *Definition) ValidateOutput(v json.RawMessage) *api.Error {
	if d.out == nil {
		return nil
	}
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	doc, err := parseJSON(v, true) // a tool's value, not a caller's: as encoding/json reads it
	if err != nil {
		return &api.Error{Code: api.CodeInvalidToolOutput, Message: "tool output is not valid JSON: " + err.Error(), Cause: err}
	}
	return validate(d.out, doc, api.CodeInvalidToolOutput, "tool output")
}

// compile turns a Tool into a Definition: the one place public input is
// checked and converted.
func compile(t Tool) (*Definition, error) {
	switch {
	case t.Name == RunCode:
		return nil, api.Errorf(api.CodeInvalidDefinition, "%q is reserved: run_code is provided by the executor and cannot be registered", RunCode)
	case !ValidName(t.Name):
		return nil, api.Errorf(api.CodeInvalidDefinition, "invalid tool name %q: must match %s", t.Name, toolName)
	case t.Body == nil:
		return nil, api.Errorf(api.CodeInvalidDefinition, "tool %q has no body", t.Name)
	case t.Timeout < 0:
		return nil, api.Errorf(api.CodeInvalidDefinition, "tool %q has a negative timeout %v", t.Name, t.Timeout)
	}
	in := t.InputSchema
	if len(in) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	inSchema, err := compileSchema("tool "+quote(t.Name)+": input schema", in, true)
	if err != nil {
		return nil, err
	}
	d := &Definition{
		schema: api.Schema{
			Name:            t.Name,
			Description:     t.Description,
			InputSchema:     clone(in),
			OutputSchema:    clone(t.OutputSchema),
			ConcurrencySafe: t.ConcurrencySafe,
			Timeout:         t.Timeout,
		},
		in:       inSchema,
		quick:    newQuickSchema(in),
		body:     t.Body,
		finalize: t.Finalize,
	}
	if len(t.OutputSchema) > 0 {
		if d.out, err = compileSchema("tool "+quote(t.Name)+": output schema", t.OutputSchema, false); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
