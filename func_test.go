package ptcx_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

type color string

const (
	red  color = "red"
	blue color = "blue"
)

type point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

type base struct {
	ID string `json:"id"`
}

type (
	tagged struct {
		Path  string `json:"path" jsonschema:"where to read"`
		Limit int    `json:"limit,omitempty"`
		skip  int
		Skip  int `json:"-"`
	}
	pointers struct {
		N *int   `json:"n"`
		P *point `json:"p,omitempty"`
	}
	slices struct {
		Tags []string `json:"tags"`
	}
	maps struct {
		Counts map[string]int `json:"counts"`
	}
	nested struct {
		At point `json:"at"`
	}
	embedded struct {
		base
		Name string `json:"name"`
	}
	times struct {
		When time.Time `json:"when"`
	}
	enums struct {
		Color color `json:"color"`
	}
	bytes struct {
		Data []byte `json:"data"`
	}
	raw struct {
		Any json.RawMessage `json:"any"`
	}
	rawPtr struct {
		Any *json.RawMessage `json:"any"`
	}
	numbers struct {
		U uint8   `json:"u"`
		F float64 `json:"f"`
	}
)

// echo returns its arguments: the output schema is the input's.
func echo[T any](_ context.Context, in T) (T, error) { return in, nil }

// Every Go type family: the schema inferred, the registry compiling it, a
// valid call running (its arguments decoded, its value encoded and checked
// against the output schema), and an invalid one refused.
func TestFunc_typeFamilies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tool   ptcx.Tool
		schema string
		valid  []string // arguments that run, and come back as they went
		denied []string // arguments refused with INVALID_ARGS
	}{
		{"struct with tags", ptcx.Func("tagged", "d", echo[tagged]),
			`{"type":"object","properties":{"path":{"type":"string","description":"where to read"},"limit":{"type":"integer"}},"required":["path"],"additionalProperties":false}`,
			[]string{`{"path":"a"}`, `{"path":"a","limit":3}`},
			[]string{`{}`, `{"path":1}`, `{"path":"a","skip":1}`, `{"path":"a","limit":1.5}`}},
		{"pointers", ptcx.Func("pointers", "d", echo[pointers]),
			`{"type":"object","properties":{"n":{"type":["null","integer"]},"p":{"type":["null","object"],"properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}},"required":["n"],"additionalProperties":false}`,
			[]string{`{"n":null}`, `{"n":1,"p":{"x":1,"y":2}}`},
			[]string{`{}`, `{"n":"1"}`, `{"n":1,"p":{"x":1}}`}},
		{"slices", ptcx.Func("slices", "d", echo[slices]),
			`{"type":"object","properties":{"tags":{"type":["null","array"],"items":{"type":"string"}}},"required":["tags"],"additionalProperties":false}`,
			[]string{`{"tags":["a","b"]}`, `{"tags":null}`, `{"tags":[]}`},
			[]string{`{"tags":[1]}`, `{"tags":"a"}`}},
		{"maps", ptcx.Func("maps", "d", echo[maps]),
			`{"type":"object","properties":{"counts":{"type":["null","object"],"additionalProperties":{"type":"integer"}}},"required":["counts"],"additionalProperties":false}`,
			[]string{`{"counts":{"a":1}}`, `{"counts":null}`, `{"counts":{}}`},
			[]string{`{"counts":{"a":"1"}}`, `{"counts":[]}`}},
		{"nested structs", ptcx.Func("nested", "d", echo[nested]),
			`{"type":"object","properties":{"at":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}},"required":["at"],"additionalProperties":false}`,
			[]string{`{"at":{"x":1,"y":2}}`},
			[]string{`{"at":null}`, `{"at":{"x":1,"y":2,"z":3}}`}},
		{"embedded structs", ptcx.Func("embedded", "d", echo[embedded]),
			`{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id","name"],"additionalProperties":false}`,
			[]string{`{"id":"1","name":"n"}`},
			[]string{`{"name":"n"}`}},
		{"time.Time", ptcx.Func("times", "d", echo[times]),
			`{"type":"object","properties":{"when":{"type":"string","format":"date-time"}},"required":["when"],"additionalProperties":false}`,
			[]string{`{"when":"2024-05-01T10:00:00Z"}`},
			[]string{`{"when":5}`, `{"when":"yesterday"}`}},
		{"enums", ptcx.Func("enums", "d", echo[enums], ptcx.Enum(red, blue)),
			`{"type":"object","properties":{"color":{"type":"string","enum":["red","blue"]}},"required":["color"],"additionalProperties":false}`,
			[]string{`{"color":"red"}`, `{"color":"blue"}`},
			[]string{`{"color":"green"}`}},
		{"a pointer to an enum", ptcx.Func("penum", "d", echo[struct {
			C *color `json:"c"`
		}], ptcx.Enum(red, blue)),
			`{"type":"object","properties":{"c":{"type":["null","string"],"enum":["red","blue",null]}},"required":["c"],"additionalProperties":false}`,
			[]string{`{"c":"red"}`, `{"c":null}`},
			[]string{`{"c":"green"}`, `{}`}},
		{"bytes", ptcx.Func("bytes", "d", echo[bytes]),
			`{"type":"object","properties":{"data":{"type":["null","string"],"contentEncoding":"base64"}},"required":["data"],"additionalProperties":false}`,
			[]string{`{"data":"aGk="}`, `{"data":null}`},
			[]string{`{"data":[104,105]}`}},
		{"json.RawMessage", ptcx.Func("raw", "d", echo[raw]),
			`{"type":"object","properties":{"any":true},"required":["any"],"additionalProperties":false}`,
			[]string{`{"any":{"deep":[1,"x",null]}}`, `{"any":null}`},
			[]string{`{}`}},
		{"a pointer to json.RawMessage: any value, not null alone", ptcx.Func("rawptr", "d", echo[rawPtr]),
			`{"type":"object","properties":{"any":true},"required":["any"],"additionalProperties":false}`,
			[]string{`{"any":{"a":1}}`, `{"any":null}`, `{"any":[1]}`},
			[]string{`{}`}},
		{"numbers", ptcx.Func("numbers", "d", echo[numbers]),
			`{"type":"object","properties":{"u":{"type":"integer","minimum":0,"maximum":255},"f":{"type":"number"}},"required":["u","f"],"additionalProperties":false}`,
			[]string{`{"u":255,"f":1.5}`, `{"u":0,"f":-2}`},
			[]string{`{"u":256,"f":1}`, `{"u":-1,"f":1}`}},
		{"a pointer to a struct", ptcx.Func("ptr", "d", echo[*point]),
			`{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}`,
			[]string{`{"x":1,"y":2}`},
			[]string{`null`, `{"x":1}`}},
		{"a map", ptcx.Func("map", "d", echo[map[string]string]),
			`{"type":"object","additionalProperties":{"type":"string"}}`,
			[]string{`{"a":"b"}`, `{}`},
			[]string{`{"a":1}`, `null`}},
		{"no arguments", ptcx.Func("none", "d", echo[struct{}]),
			`{"type":"object","additionalProperties":false}`,
			[]string{`{}`},
			[]string{`{"a":1}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.JSONEq(t, tc.schema, string(tc.tool.InputSchema))
			h := newHost(t, ptcx.WithTools(tc.tool))
			for _, args := range tc.valid {
				r := h.Execute(context.Background(), ptcx.Call{Name: tc.tool.Name, Args: json.RawMessage(args)})
				require.Nil(t, r.Err, args)
				require.JSONEq(t, args, string(r.Value), args)
			}
			for _, args := range tc.denied {
				r := h.Execute(context.Background(), ptcx.Call{Name: tc.tool.Name, Args: json.RawMessage(args)})
				require.ErrorIs(t, r.AsError(), api.ErrInvalidArgs, args)
			}
		})
	}
}

func TestFunc_outputSchema(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tool   ptcx.Tool
		schema string // "" for none
		value  string
	}{
		{"a number", addTool, `{"type":"number"}`, `3`},
		{"a nil map", ptcx.Func("nilmap", "d", func(context.Context, struct{}) (map[string]int, error) { return nil, nil }),
			`{"type":["null","object"],"additionalProperties":{"type":"integer"}}`, `null`},
		{"a nil slice", ptcx.Func("nilslice", "d", func(context.Context, struct{}) ([]point, error) { return nil, nil }),
			`{"type":["null","array"],"items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}}`, `null`},
		{"a struct with a nil map", ptcx.Func("nilfield", "d", func(context.Context, struct{}) (maps, error) { return maps{}, nil }),
			`{"type":"object","properties":{"counts":{"type":["null","object"],"additionalProperties":{"type":"integer"}}},"required":["counts"],"additionalProperties":false}`, `{"counts":null}`},
		{"any: no output schema", ptcx.Func("anything", "d", func(context.Context, struct{}) (any, error) { return []int{1}, nil }), "", `[1]`},
		{"json.RawMessage: no output schema", ptcx.Func("rawout", "d", func(context.Context, struct{}) (json.RawMessage, error) { return json.RawMessage(`{"a":1}`), nil }), "", `{"a":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.schema == "" {
				require.Nil(t, tc.tool.OutputSchema)
			} else {
				require.JSONEq(t, tc.schema, string(tc.tool.OutputSchema))
			}
			h := newHost(t, ptcx.WithTools(tc.tool))
			r := h.Execute(context.Background(), ptcx.Call{Name: tc.tool.Name, Args: json.RawMessage(`{}`)})
			if tc.tool.Name == "add" {
				r = h.Execute(context.Background(), ptcx.Call{Name: "add", Args: json.RawMessage(`{"a":1,"b":2}`)})
			}
			require.Nil(t, r.Err)
			require.JSONEq(t, tc.value, string(r.Value))
		})
	}
}

// liar's JSON does not match the schema inferred from its fields.
type liar struct {
	A int `json:"a"`
}

func (liar) MarshalJSON() ([]byte, error) { return []byte(`{"b":1}`), nil }

func TestFunc_Execute_failures(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		tool ptcx.Tool
		args string
		is   error
		text string
	}{
		{"the value does not match the output schema",
			ptcx.Func("liar", "d", func(context.Context, struct{}) (liar, error) { return liar{}, nil }), `{}`,
			api.ErrInvalidToolOutput, `liar: tool output do not match the schema: at /: additional properties 'b' not allowed; at /: missing property 'a'`},
		{"arguments valid for the schema but not for the Go type",
			ptcx.Func("big", "d", echo[point]), `{"x":1e30,"y":0}`,
			api.ErrInvalidArgs, `arguments of big do not fit its Go type ptcx_test.point: json: cannot unmarshal number 1e30`},
		{"an *Error keeps its code",
			ptcx.Func("deny", "d", func(context.Context, struct{}) (int, error) {
				return 0, api.Errorf(api.CodeDenied, "not today")
			}), `{}`,
			api.ErrDenied, "not today"},
		{"any other error is TOOL_FAILED",
			ptcx.Func("fail", "d", func(context.Context, struct{}) (int, error) { return 0, errors.New("disk full") }), `{}`,
			api.ErrToolFailed, "disk full"},
		{"a value that is not JSON",
			ptcx.Func("nan", "d", func(context.Context, struct{}) (float64, error) { return math.NaN(), nil }), `{}`,
			api.ErrToolFailed, "tool output is not JSON: json: unsupported value: NaN"},
		{"the timeout",
			ptcx.Func("slow", "d", func(ctx context.Context, _ struct{}) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, ptcx.Timeout(20*time.Millisecond)), `{}`,
			api.ErrToolTimeout, "slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, ptcx.WithTools(tc.tool))
			r := h.Execute(ctx, ptcx.Call{Name: tc.tool.Name, Args: json.RawMessage(tc.args)})
			require.ErrorIs(t, r.AsError(), tc.is)
			require.Contains(t, r.Text, tc.text)
		})
	}
}

func TestFunc_options(t *testing.T) {
	safe := ptcx.Func("safe", "d", echo[point], ptcx.ConcurrencySafe(), ptcx.Timeout(time.Second))
	require.True(t, safe.ConcurrencySafe)
	require.Equal(t, time.Second, safe.Timeout)
	plain := ptcx.Func("plain", "d", echo[point])
	require.False(t, plain.ConcurrencySafe)
	require.Zero(t, plain.Timeout)

	h := newHost(t, ptcx.WithTools(safe))
	s, ok := h.Registry().Get("", "safe")
	require.True(t, ok)
	require.True(t, s.ConcurrencySafe)
	require.Equal(t, time.Second, s.Timeout)
}

// What cannot become a tool fails at registration, saying why.
func TestFunc_invalid(t *testing.T) {
	var nilFn func(context.Context, point) (int, error)
	type enumTag struct {
		C color `json:"c" jsonschema:"enum=red,blue"`
	}
	for _, tc := range []struct {
		name string
		tool ptcx.Tool
		is   error
		want string
	}{
		{"arguments that are not an object", ptcx.Func("str", "d", echo[string]), api.ErrUnsupportedSchema,
			`tool "str": input type string: tool arguments are a JSON object: use a struct, a pointer to one, or a map with string keys`},
		{"arguments that are a slice", ptcx.Func("list", "d", echo[[]int]), api.ErrUnsupportedSchema, `tool arguments are a JSON object`},
		{"a channel", ptcx.Func("ch", "d", func(context.Context, struct{ C chan int }) (int, error) { return 0, nil }), api.ErrUnsupportedSchema,
			`type chan int is unsupported by jsonschema`},
		{"a map with int keys", ptcx.Func("intmap", "d", echo[map[int]string]), api.ErrUnsupportedSchema, `unsupported map key type int`},
		{"an output that is a func", ptcx.Func("fn", "d", func(context.Context, struct{}) (func(), error) { return nil, nil }), api.ErrUnsupportedSchema,
			`tool "fn": output type func()`},
		{"an enum= tag (jsonschema-go tags are descriptions; use Enum)", ptcx.Func("tag", "d", echo[enumTag]), api.ErrUnsupportedSchema,
			`tag must not begin with 'WORD='`},
		{"Enum without values", ptcx.Func("noenum", "d", echo[enums], ptcx.Enum[color]()), api.ErrUnsupportedSchema,
			`Enum[ptcx_test.color] lists no values`},
		{"Enum of a type with no schema", ptcx.Func("chenum", "d", echo[enums], ptcx.Enum[chan int]()), api.ErrUnsupportedSchema,
			`Enum: For[chan int]()`},
		{"a nil function", ptcx.Func("nilfn", "d", nilFn), api.ErrInvalidDefinition, `tool "nilfn" has a nil function`},
		{"a nil option", ptcx.Func("nilopt", "d", echo[point], nil), api.ErrInvalidDefinition, `tool "nilopt": a nil FuncOption`},
		{"a negative timeout", ptcx.Func("neg", "d", echo[point], ptcx.Timeout(-time.Second)), api.ErrInvalidDefinition, `tool "neg" has a negative timeout -1s`},
		{"a bad name", ptcx.Func("no spaces", "d", echo[point]), api.ErrInvalidDefinition, `invalid tool name "no spaces"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t)
			err := h.Register(tc.tool)
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.want)
			_, rerr := tc.tool.RegistryTool()
			if !errors.Is(tc.is, api.ErrInvalidDefinition) {
				require.ErrorIs(t, rerr, tc.is, "RegistryTool reports what Func met")
			}
		})
	}
}

// A typed tool is usable with the registry package on its own.
func TestTool_RegistryTool(t *testing.T) {
	def, err := addTool.RegistryTool()
	require.NoError(t, err)
	reg := registry.New()
	require.NoError(t, reg.NewScope("agent", registry.Deployment))
	require.NoError(t, reg.Register("agent", def))
	s, ok := reg.Get("agent", "add")
	require.True(t, ok)
	require.JSONEq(t, string(addTool.InputSchema), string(s.InputSchema))
	require.True(t, s.ConcurrencySafe)
}

// A body called with no arguments at all (the registry package used on
// its own) reads them as {}: a pointer argument is never nil.
func TestFunc_Body_noArguments(t *testing.T) {
	var got *point
	def, err := ptcx.Func("p", "d", func(_ context.Context, in *point) (int, error) { got = in; return 0, nil }).RegistryTool()
	require.NoError(t, err)
	out, err := def.Body(context.Background(), ptcx.Input{})
	require.NoError(t, err)
	require.JSONEq(t, `0`, string(out.Value))
	require.Equal(t, &point{}, got)
}

// The policy options set the tool's Policy, checked at registration.
func TestFunc_policyOptions(t *testing.T) {
	untrusted := ptcx.Label{Integrity: api.Untrusted}
	tool := ptcx.Func("send", "d", echo[point], ptcx.Labels(untrusted),
		ptcx.AcceptsAtMost(ptcx.Accepts{Args: map[string]ptcx.Label{"x": {Confidentiality: api.Secret}}}),
		ptcx.Constraints("args.x < 10"), ptcx.Constraints("args.y < 10"), ptcx.CallsPerRun(2), ptcx.Cost(3, 9))
	require.Equal(t, &untrusted, tool.Policy.Labels)
	require.Equal(t, []string{"args.x < 10", "args.y < 10"}, tool.Policy.Constraints)
	require.Equal(t, 2, tool.Policy.CallsPerRun)
	require.EqualValues(t, 3, tool.Policy.Cost)
	require.EqualValues(t, 9, tool.Policy.MaxCost)
	h := newHost(t, ptcx.WithTools(tool))
	r := h.Execute(context.Background(), ptcx.Call{Name: "send", Args: json.RawMessage(`{"x": 11, "y": 1}`)})
	require.ErrorIs(t, r.AsError(), api.ErrDenied)
	require.Equal(t, "constraints", r.Err.Policy.Rule)
	r = h.Execute(context.Background(), ptcx.Call{Name: "send", Args: json.RawMessage(`{"x": 1, "y": 1}`)})
	require.True(t, r.OK(), r.Text)
	require.Equal(t, untrusted, r.Labels)

	bad := ptcx.Func("bad", "d", echo[point], ptcx.Constraints("args.x <"))
	_, err := ptcx.New(context.Background(), ptcx.WithTools(bad))
	require.ErrorIs(t, err, api.ErrInvalidDefinition)
	require.ErrorContains(t, err, `tool "bad": constraints[0] "args.x <": does not compile`)

	replaced := ptcx.Func("p", "d", echo[point], ptcx.CallsPerRun(2), ptcx.WithPolicy(ptcx.Policy{Cost: 1}))
	require.Zero(t, replaced.Policy.CallsPerRun, "WithPolicy replaces what earlier options set")
}

// NeedsApproval puts every call to the approver: approved, the call runs;
// without an approver, it is DENIED.
func TestFunc_NeedsApproval(t *testing.T) {
	tool := ptcx.Func("deploy", "d", echo[point], ptcx.NeedsApproval())
	require.True(t, tool.Policy.NeedsApproval)
	call := ptcx.Call{Name: "deploy", Args: json.RawMessage(`{"x": 1, "y": 2}`)}

	r := newHost(t, ptcx.WithTools(tool)).Execute(context.Background(), call)
	require.ErrorIs(t, r.AsError(), api.ErrDenied)
	require.Equal(t, "needs_approval", r.Err.Policy.Rule)
	require.Contains(t, r.Err.Message, "no approver is configured: deploy needs approval")

	var asked []string
	h := newHost(t, ptcx.WithTools(tool), ptcx.WithExecutor(executor.NewConfig().WithApprover(
		executor.ApproverFunc(func(_ context.Context, req executor.Request, q string) (executor.Approval, string, error) {
			asked = append(asked, req.Tool+": "+q)
			return executor.ApproveOnce, "", nil
		}))))
	r = h.Execute(context.Background(), call)
	require.True(t, r.OK(), r.Text)
	require.Equal(t, []string{"deploy: deploy needs approval: its declaration says needs_approval"}, asked)
}
