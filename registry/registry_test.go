package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

func body(context.Context, api.Input) (api.Output, error) {
	return api.ValueOutput("ok")
}

func tool(name string) registry.Tool {
	return registry.Tool{Name: name, Description: name + " tool", Body: body}
}

func TestRegistry_Register_names(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"read", true},
		{"_x", true},
		{"mcp.github.search-issues", true},
		{"A" + strings.Repeat("b", 63), true},
		{"A" + strings.Repeat("b", 64), false},
		{"", false},
		{"1read", false},
		{"-read", false},
		{"read file", false},
		{"read/file", false},
		{"ré", false},
		{"run_code", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := registry.New().Register(registry.Deployment, tool(tt.name))
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, api.ErrInvalidDefinition)
		})
	}
}

func TestRegistry_Register_badDefinitions(t *testing.T) {
	tests := []struct {
		name     string
		tool     registry.Tool
		code     api.Code
		contains string
	}{
		{"no body", registry.Tool{Name: "x"}, api.CodeInvalidDefinition, "has no body"},
		{"negative timeout", registry.Tool{Name: "x", Body: body, Timeout: -1}, api.CodeInvalidDefinition, "negative timeout"},
		{"schema not JSON", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{`)}, api.CodeUnsupportedSchema, "not valid JSON"},
		{"schema not an object", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`[]`)}, api.CodeUnsupportedSchema, "must be a JSON object, got an array"},
		{"input not type object", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"type":"string"}`)}, api.CodeUnsupportedSchema, `"type": "object"`},
		{"input without type", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"properties":{}}`)}, api.CodeUnsupportedSchema, `"type": "object"`},
		{"invalid keyword value", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"strin"}}}`)}, api.CodeUnsupportedSchema, "cannot be compiled"},
		{"remote ref", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`)}, api.CodeUnsupportedSchema, "cannot be compiled"},
		{"file ref", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)}, api.CodeUnsupportedSchema, "cannot be compiled"},
		{"dangling local ref", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)}, api.CodeUnsupportedSchema, "cannot be compiled"},
		{"unknown draft", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"$schema":"https://example.com/my-draft","type":"object"}`)}, api.CodeUnsupportedSchema, "cannot be compiled"},
		{"bad regex", registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"(("}}}`)}, api.CodeUnsupportedSchema, "cannot be compiled"},
		{"a bad label", registry.Tool{Name: "x", Body: body, Policy: policy.Declaration{Labels: &api.Label{Integrity: 9}}}, api.CodeInvalidDefinition, `tool "x": labels:`},
		{"CEL that does not compile", registry.Tool{Name: "x", Body: body, Policy: policy.Declaration{Constraints: []string{"args.a >"}}}, api.CodeInvalidDefinition, `tool "x": constraints[0] "args.a >": does not compile`},
		{"bad on_violation", registry.Tool{Name: "x", Body: body, Policy: policy.Declaration{Accepts: &policy.Accepts{OnViolation: "log"}}}, api.CodeInvalidDefinition, `tool "x": accepts.on_violation "log"`},
		{"output schema not JSON", registry.Tool{Name: "x", Body: body, OutputSchema: json.RawMessage(`nope`)}, api.CodeUnsupportedSchema, "output schema is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := registry.New().Register(registry.Deployment, tt.tool)
			require.Error(t, err)
			require.Equal(t, tt.code, api.CodeOf(err), err.Error())
			require.Contains(t, err.Error(), tt.contains)
		})
	}
}

func TestRegistry_Register_acceptsRealSchemas(t *testing.T) {
	for _, s := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"a":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/a"}}}`,
		`{"type":"object","properties":{"mode":{"enum":["a","b"]},"t":{"prefixItems":[{"type":"string"}]}}}`,
	} {
		require.NoError(t, registry.New().Register(registry.Deployment, registry.Tool{Name: "x", Body: body, InputSchema: json.RawMessage(s)}), s)
	}
}

func TestRegistry_Register_duplicates(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.NewScope("preset", registry.Deployment))
	require.NoError(t, r.NewScope("agent", "preset"))
	require.NoError(t, r.NewScope("sibling", registry.Deployment))
	require.NoError(t, r.Register("agent", tool("x")))

	err := r.Register("agent", tool("x"))
	require.ErrorContains(t, err, `tool "x" is already registered on scope "agent"`)
	err = r.Register(registry.Deployment, tool("x"))
	require.ErrorContains(t, err, `already registered on scope "agent", below "deployment"`)
	require.NoError(t, r.Register("sibling", tool("x")), "siblings may reuse a name")

	require.NoError(t, r.Register(registry.Deployment, tool("y")))
	require.ErrorContains(t, r.Register("agent", tool("y")), `already registered on scope "deployment"`)
}

func TestRegistry_scopes(t *testing.T) {
	r := registry.New()
	require.ErrorContains(t, r.NewScope("a", "ghost"), `unknown scope "ghost"`)
	require.NoError(t, r.NewScope("a", ""))
	require.ErrorContains(t, r.NewScope("a", registry.Deployment), "already exists")
	require.ErrorContains(t, r.NewScope("bad name", registry.Deployment), "invalid scope name")
	require.ErrorContains(t, r.NewScope("", registry.Deployment), "invalid scope name")
	require.ErrorContains(t, r.Register("ghost", tool("x")), `unknown scope "ghost"`)
	_, err := r.Schemas("ghost")
	require.Error(t, err)
	_, ok := r.Get("ghost", "x")
	require.False(t, ok)
	chain, err := r.Chain("a")
	require.NoError(t, err)
	require.Equal(t, []string{"deployment", "a"}, chain)
	require.Equal(t, []string{"a", "deployment"}, r.Scopes())
}

func TestRegistry_DeclareMode(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.NewScope("preset", registry.Deployment))
	require.NoError(t, r.NewScope("agent", "preset"))

	m, err := r.Mode("agent")
	require.NoError(t, err)
	require.Equal(t, api.ModeNative, m, "native until declared")

	require.NoError(t, r.DeclareMode(registry.Deployment, api.ModeBoth))
	require.NoError(t, r.DeclareMode("preset", api.ModePTC))
	m, _ = r.Mode("agent")
	require.Equal(t, api.ModePTC, m, "the nearest declaration wins")

	err = r.DeclareMode("preset", api.ModeNative)
	require.ErrorIs(t, err, api.ErrInvalidDefinition)
	require.ErrorContains(t, err, `scope "preset" already declares mode ptc`)
	require.ErrorContains(t, r.DeclareMode("agent", "turbo"), `unknown mode "turbo"`)
	require.ErrorContains(t, r.DeclareMode("ghost", api.ModePTC), "unknown scope")

	_, err = api.ParseMode("PTC")
	require.Error(t, err)
	got, err := api.ParseMode("both")
	require.NoError(t, err)
	require.Equal(t, api.ModeBoth, got)
}

func TestRegistry_Restrict(t *testing.T) {
	r := registry.New()
	for _, n := range []string{"read", "write", "bash"} {
		require.NoError(t, r.Register(registry.Deployment, tool(n)))
	}
	require.NoError(t, r.NewScope("reader", registry.Deployment))
	require.NoError(t, r.NewScope("nobash", registry.Deployment))
	require.NoError(t, r.NewScope("nested", "reader"))

	require.NoError(t, r.Restrict("reader", registry.Restriction{Allow: []string{"read"}}))
	require.NoError(t, r.Register("reader", tool("note")), "a scope's own tools are not narrowed")
	require.NoError(t, r.Restrict("nobash", registry.Restriction{Deny: []string{"bash"}}))

	visible := func(scope string) []string {
		ss, err := r.Schemas(scope)
		require.NoError(t, err)
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	require.Equal(t, []string{"note", "read"}, visible("reader"))
	require.Equal(t, []string{"note", "read"}, visible("nested"))
	require.Equal(t, []string{"read", "write"}, visible("nobash"))
	_, ok := r.Get("reader", "write")
	require.False(t, ok)
	require.Equal(t, resolve.NotVisible, resolve.Open(r)("reader", "write", true).Refusal, "restricted tools cannot execute, nested or not")

	tests := []struct {
		scope    string
		rs       registry.Restriction
		contains string
	}{
		{"reader", registry.Restriction{Deny: []string{"read"}}, "already declares a restriction"},
		{"nested", registry.Restriction{Allow: []string{"write"}}, `names "write", which it does not inherit`},
		{"nested", registry.Restriction{Deny: []string{"typo"}}, `names "typo"`},
		{registry.Deployment, registry.Restriction{Deny: []string{"read"}}, "no parent"},
		{"nested", registry.Restriction{Allow: []string{"read"}, Deny: []string{"read"}}, "both allowed and denied"},
		{"nested", registry.Restriction{Deny: []string{"run_code"}}, "run_code cannot be restricted"},
		{"ghost", registry.Restriction{}, "unknown scope"},
	}
	for _, tt := range tests {
		t.Run(tt.contains, func(t *testing.T) {
			err := r.Restrict(tt.scope, tt.rs)
			require.ErrorIs(t, err, api.ErrInvalidDefinition)
			require.ErrorContains(t, err, tt.contains)
		})
	}
}

func TestRegistry_views(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.Register(registry.Deployment, registry.Tool{
		Name: "read", Description: "Read.", Body: body, ConcurrencySafe: true,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"string"}`),
	}))
	require.NoError(t, r.DeclareMode(registry.Deployment, api.ModePTC))

	s, ok := r.Get(registry.Deployment, "read")
	require.True(t, ok)
	require.True(t, s.ConcurrencySafe)
	s.InputSchema[0] = 'X' // a caller cannot change the registry
	again, _ := r.Get(registry.Deployment, "read")
	require.Equal(t, byte('{'), again.InputSchema[0])

	rc, ok := r.Get(registry.Deployment, "run_code")
	require.True(t, ok)
	require.True(t, rc.Transport)
	require.Equal(t, registry.DefaultRunCodeDescription, rc.Description)

	r.SetRunCodeDescriber(func(scope, _ string, bindable []api.Schema) string {
		return fmt.Sprintf("%s: %d tools", scope, len(bindable))
	})
	wire, err := r.WireSchemas(registry.Deployment)
	require.NoError(t, err)
	require.Len(t, wire, 1)
	require.Equal(t, "deployment: 1 tools", wire[0].Description)

	b, err := r.Bindable(registry.Deployment)
	require.NoError(t, err)
	require.Len(t, b, 1)
	require.Equal(t, "read", b[0].Name)
}

func TestRegistry_wireFormats(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.Register(registry.Deployment, registry.Tool{
		Name: "read", Description: "Read a file.", Body: body,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}))
	require.NoError(t, r.DeclareMode(registry.Deployment, api.ModeBoth))
	wire, err := r.WireSchemas(registry.Deployment)
	require.NoError(t, err)

	oa, err := json.Marshal(registry.OpenAITools(wire))
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`[
		{"type":"function","function":{"name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
		{"type":"function","function":{"name":"run_code","description":%q,"parameters":%s}}
	]`, registry.DefaultRunCodeDescription, registry.RunCodeInputSchema), string(oa))

	an, err := json.Marshal(registry.AnthropicTools(wire))
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`[
		{"name":"read","description":"Read a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
		{"name":"run_code","description":%q,"input_schema":%s}
	]`, registry.DefaultRunCodeDescription, registry.RunCodeInputSchema), string(an))
}

func TestRegistry_ResolveExecution(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.Register(registry.Deployment, tool("write")))
	for _, s := range []string{"native", "ptc", "both"} {
		require.NoError(t, r.NewScope(s, registry.Deployment))
		require.NoError(t, r.DeclareMode(s, api.Mode(s)))
	}
	tests := []struct {
		scope, name string
		nested      bool
		want        resolve.Refusal
	}{
		{"native", "write", false, resolve.Resolved},
		{"native", "write", true, resolve.Resolved},
		{"native", "run_code", false, resolve.NotVisible},
		{"ptc", "write", false, resolve.Collapsed},
		{"ptc", "write", true, resolve.Resolved},
		{"ptc", "run_code", false, resolve.Resolved},
		{"ptc", "run_code", true, resolve.NoRecursion},
		{"ptc", "nope", false, resolve.NotVisible},
		{"both", "write", false, resolve.Resolved},
		{"both", "run_code", false, resolve.Resolved},
		{"both", "run_code", true, resolve.NoRecursion},
		{"ghost", "write", false, resolve.UnknownScope},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/nested=%v", tt.scope, tt.name, tt.nested), func(t *testing.T) {
			res := resolve.Open(r)(tt.scope, tt.name, tt.nested)
			require.Equal(t, tt.want, res.Refusal)
			require.Equal(t, tt.want == resolve.Resolved, res.Definition != nil)
			if tt.want == resolve.Collapsed {
				require.NotNil(t, res.Visible, "a collapsed name is still visible")
			}
		})
	}
}

func TestDefinition_validation(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.Register(registry.Deployment, registry.Tool{
		Name: "t", Body: body,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		OutputSchema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`),
	}))
	d := resolve.Open(r)(registry.Deployment, "t", false).Definition
	args, perr := resolve.ParseArgs(json.RawMessage(`{"n": 12345678901234567890}`))
	require.Nil(t, perr)
	require.Nil(t, d.ValidateArgs(args), "big integers keep their precision")
	args, _ = resolve.ParseArgs(json.RawMessage(`{"n": 1.5}`))
	require.Equal(t, api.CodeInvalidArgs, d.ValidateArgs(args).Code)
	require.Nil(t, d.ValidateOutput(json.RawMessage(`["a"]`)))
	bad := d.ValidateOutput(json.RawMessage(`["a", 1]`))
	require.Equal(t, api.CodeInvalidToolOutput, bad.Code)
	require.Equal(t, []string{"at /1: got number, want string"}, bad.Violations)
	require.Equal(t, api.CodeInvalidToolOutput, d.ValidateOutput(json.RawMessage(`[`)).Code)

	_, perr = resolve.ParseArgs(nil)
	require.Nil(t, perr, "empty means {}")
	for _, raw := range []string{` `, `[]`, `"s"`, `{"a":1}x`, `{"a":}`} {
		_, perr = resolve.ParseArgs(json.RawMessage(raw))
		require.NotNil(t, perr, raw)
		require.Equal(t, api.CodeInvalidArgs, perr.Code)
	}
}

// The registry may change while executions resolve against it.
func TestRegistry_hammer(t *testing.T) {
	r := registry.New()
	require.NoError(t, r.DeclareMode(registry.Deployment, api.ModeBoth))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			scope := fmt.Sprintf("s%d", i)
			require.NoError(t, r.NewScope(scope, registry.Deployment))
			for j := range 50 {
				require.NoError(t, r.Register(scope, tool(fmt.Sprintf("t%d_%d", i, j))))
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				_, _ = r.WireSchemas(registry.Deployment)
				_ = resolve.Open(r)(fmt.Sprintf("s%d", i), "t0_0", true)
				_, _ = r.Schemas(fmt.Sprintf("s%d", i))
			}
		}()
	}
	wg.Wait()
	ss, err := r.Schemas("s3")
	require.NoError(t, err)
	require.Len(t, ss, 51)
}

// The numbers in run_code's schema are the constants that name them.
func TestRunCodeInputSchema_numbersAreItsConstants(t *testing.T) {
	var schema struct {
		Properties struct {
			Code   struct{ MaxLength int }
			Limits struct {
				Properties struct {
					MemoryMB struct{ Minimum int } `json:"memory_mb"`
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(registry.RunCodeInputSchema), &schema))
	require.Equal(t, registry.MaxCodeLength, schema.Properties.Code.MaxLength)
	require.Equal(t, registry.MinMemoryMB, schema.Properties.Limits.Properties.MemoryMB.Minimum)
}
