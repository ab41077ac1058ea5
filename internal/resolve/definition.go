package resolve

import (
	"context"
	"encoding/json"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
)

// Definition is a compiled tool: what the executor runs. It is immutable.
type Definition struct {
	schema   api.Schema
	in, out  *jsonschema.Schema
	quick    *quickSchema // vouches for simple arguments without in; nil when the schema is not simple
	body     func(context.Context, api.Input) (api.Output, error)
	finalize func(context.Context, api.Result) api.Result
	policy   *policy.Compiled // nil: the tool declares nothing about data flow
}

// New compiles a tool's schemas into a Definition: the one place they are
// checked (UNSUPPORTED_SCHEMA) and converted. s.InputSchema must be set
// (the registry defaults it); body is nil only for the transport, whose body
// the executor supplies. s is kept as it is: the caller gives up its slices.
func New(s api.Schema, body func(context.Context, api.Input) (api.Output, error), finalize func(context.Context, api.Result) api.Result) (*Definition, error) {
	what := "tool " + quote(s.Name) + ": "
	if s.Transport {
		what = s.Name + " "
	}
	in, err := compileSchema(what+"input schema", s.InputSchema, true)
	if err != nil {
		return nil, err
	}
	d := &Definition{schema: s, in: in, quick: newQuickSchema(s.InputSchema), body: body, finalize: finalize}
	if len(s.OutputSchema) > 0 {
		if d.out, err = compileSchema(what+"output schema", s.OutputSchema, false); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// WithPolicy returns a copy of d with p, the tool's compiled declaration
// (registration's: registry compiles it once).
func (d *Definition) WithPolicy(p *policy.Compiled) *Definition {
	c := *d
	c.policy = p
	return &c
}

// Policy returns what the tool declared about data flow and its
// capabilities, compiled; nil when it declared nothing.
func (d *Definition) Policy() *policy.Compiled { return d.policy }

// Name returns the tool's name.
func (d *Definition) Name() string { return d.schema.Name }

// Schema returns the definition's view. Its slices are the definition's:
// copy them before handing the view out.
func (d *Definition) Schema() api.Schema { return d.schema }

// ConcurrencySafe reports the tool's scheduling class.
func (d *Definition) ConcurrencySafe() bool { return d.schema.ConcurrencySafe }

// Timeout returns the tool's declared timeout (0: none).
func (d *Definition) Timeout() time.Duration { return d.schema.Timeout }

// Transport reports whether d is the reserved run_code transport, whose body
// the executor supplies.
func (d *Definition) Transport() bool { return d.schema.Transport }

// Body returns the tool's body (nil for the transport).
func (d *Definition) Body() func(context.Context, api.Input) (api.Output, error) { return d.body }

// Finalizer returns the tool's finalizer, or nil.
func (d *Definition) Finalizer() func(context.Context, api.Result) api.Result { return d.finalize }

// ValidateArgs checks decoded arguments against the input schema, listing
// every violation (INVALID_ARGS).
func (d *Definition) ValidateArgs(args map[string]any) *api.Error {
	if d.quick != nil && d.quick.valid(args) {
		return nil
	}
	return validate(d.in, args, api.CodeInvalidArgs, "arguments")
}

// Validate is ValidateArgs on arguments read by ReadArgs: a flat object
// that the quick check vouches for is never decoded.
func (d *Definition) Validate(a *Args) *api.Error {
	if a.m == nil && d.quick != nil && d.quick.validFlat(a.raw, &a.flat) {
		return nil
	}
	return d.ValidateArgs(a.Map())
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

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
