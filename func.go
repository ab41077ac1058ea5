package ptcx

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ptcx/ptcx/api"
)

// Func builds a tool from a Go function. Its input and output JSON Schemas
// are inferred from In and Out (github.com/google/jsonschema-go: struct
// fields by their json names, required unless omitempty or omitzero, no
// other properties; a `jsonschema:"..."` tag is the field's description;
// pointers, slices and maps also accept null). In must be a struct, a
// pointer to one, or a map with string keys: tool arguments are a JSON
// object. An Out whose schema is unconstrained (any, json.RawMessage) gives
// no output schema.
//
// fn gets the arguments decoded into In after they were validated against
// the input schema; its result is encoded to JSON and checked against the
// output schema by the executor (INVALID_TOOL_OUTPUT). An error fn returns
// that is an *Error keeps its Code; any other is TOOL_FAILED.
//
// A type the schema cannot be inferred from (a channel, a func, a map with
// other keys, a cycle) makes the tool fail at registration, with the reason.
func Func[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...FuncOption) Tool {
	fail := func(err error) Tool { return Tool{Name: name, Description: description, Err: err} }
	fo := funcOptions{types: map[reflect.Type]*jsonschema.Schema{}}
	for _, opt := range opts {
		if opt == nil {
			return fail(api.Errorf(api.CodeInvalidDefinition, "tool %q: a nil FuncOption", name))
		}
		opt(&fo)
	}
	if fo.err != nil {
		return fail(api.Errorf(api.CodeUnsupportedSchema, "tool %q: %v", name, fo.err))
	}
	if fn == nil {
		return fail(api.Errorf(api.CodeInvalidDefinition, "tool %q has a nil function", name))
	}
	in, err := inputSchema(reflect.TypeFor[In](), fo.types)
	if err != nil {
		return fail(api.Errorf(api.CodeUnsupportedSchema, "tool %q: input type %v: %v", name, reflect.TypeFor[In](), err))
	}
	out, err := outputSchema(reflect.TypeFor[Out](), fo.types)
	if err != nil {
		return fail(api.Errorf(api.CodeUnsupportedSchema, "tool %q: output type %v: %v", name, reflect.TypeFor[Out](), err))
	}
	body := func(ctx context.Context, input Input) (Output, error) {
		raw := input.Args
		if len(raw) == 0 {
			raw = json.RawMessage("{}") // as the executor reads no arguments
		}
		var args In // a pointer In is never left nil: arguments are an object
		if err := json.Unmarshal(raw, &args); err != nil {
			return Output{}, &Error{Code: api.CodeInvalidArgs, Cause: err,
				Message: fmt.Sprintf("arguments of %s do not fit its Go type %v: %v", name, reflect.TypeFor[In](), err)}
		}
		v, err := fn(ctx, args)
		if err != nil {
			return Output{}, err
		}
		return api.ValueOutput(v)
	}
	return Tool{Name: name, Description: description, InputSchema: in, OutputSchema: out,
		ConcurrencySafe: fo.concurrencySafe, Timeout: fo.timeout, Body: body, Policy: fo.policy}
}

// A FuncOption changes a tool Func builds.
type FuncOption func(*funcOptions)

type funcOptions struct {
	concurrencySafe bool
	timeout         time.Duration
	types           map[reflect.Type]*jsonschema.Schema
	policy          Policy
	err             error
}

// WithPolicy declares what the tool's results carry and what it accepts
// (Tool.Policy; docs/security.md, "Data flow"): checked, its constraints
// compiled, at registration. It replaces what earlier policy options set;
// Labels, AcceptsAtMost, Constraints, CallsPerRun, Cost and NeedsApproval
// change one member each.
func WithPolicy(p Policy) FuncOption {
	return func(o *funcOptions) { o.policy = p }
}

// Labels sets the labels every result of the tool carries at least (a
// tool reading email: {Integrity: api.Untrusted, Confidentiality:
// api.Private}).
func Labels(l Label) FuncOption {
	return func(o *funcOptions) { o.policy.Labels = &l }
}

// AcceptsAtMost sets what a call of the tool may carry (policy.Accepts):
// past it the call is denied, or asked about.
func AcceptsAtMost(a Accepts) FuncOption {
	return func(o *funcOptions) { o.policy.Accepts = &a }
}

// Constraints adds CEL expressions over args that every call must satisfy
// ("args.amount <= 1000").
func Constraints(exprs ...string) FuncOption {
	return func(o *funcOptions) { o.policy.Constraints = append(o.policy.Constraints, exprs...) }
}

// CallsPerRun bounds the calls of the tool one run_code execution makes.
func CallsPerRun(n int) FuncOption {
	return func(o *funcOptions) { o.policy.CallsPerRun = n }
}

// Cost sets what one call costs and the most an execution may have spent
// for a call of the tool to proceed (0: no bound).
func Cost(cost, maxCost int64) FuncOption {
	return func(o *funcOptions) { o.policy.Cost, o.policy.MaxCost = cost, maxCost }
}

// NeedsApproval puts every call of the tool to the approver before it runs
// (Policy.NeedsApproval): the executor's (executor.Config.WithApprover,
// through WithExecutor), or the call's (executor.WithCallApprover); with
// none, the call is DENIED. A nested call the run's approved plan covers
// (Call.Plan) is not asked about again.
func NeedsApproval() FuncOption {
	return func(o *funcOptions) { o.policy.NeedsApproval = true }
}

// ConcurrencySafe lets the tool's calls overlap with other concurrency-safe
// calls inside one program (default: exclusive, it runs alone).
func ConcurrencySafe() FuncOption {
	return func(o *funcOptions) { o.concurrencySafe = true }
}

// Timeout bounds one run of the function (TOOL_TIMEOUT); fn's context is
// cancelled when it expires. Default: no timeout. A negative d fails at
// registration.
func Timeout(d time.Duration) FuncOption {
	return func(o *funcOptions) { o.timeout = d }
}

// Enum restricts every value of type T, wherever it appears in the tool's
// input or output, to values (a JSON Schema "enum"): a named string type
// with its constants, typically. jsonschema-go's struct tags carry only
// descriptions, so this is how an enum is declared.
func Enum[T any](values ...T) FuncOption {
	return func(o *funcOptions) {
		s, err := jsonschema.For[T](nil)
		if err != nil {
			o.err = fmt.Errorf("Enum: %w", err)
			return
		}
		if len(values) == 0 {
			o.err = fmt.Errorf("Enum[%v] lists no values", reflect.TypeFor[T]())
			return
		}
		s.Enum = make([]any, len(values))
		for i, v := range values {
			s.Enum[i] = v
		}
		o.types[reflect.TypeFor[T]()] = s
	}
}
