package sdkgen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
	"github.com/ptcx/ptcx/wasmhost"
)

// The tests here close the loop of TestDeclarations_typeCheck_programs: a program that
// type-checks against the declarations for testdata/tools.json must also run in the real sandbox
// against those tools, with every nested call accepted by the tool's input schema and every tool
// value (testdata/outputs.json) accepted by its output schema. Then the TypeScript types and the
// JSON Schemas agree, at least as far as the sample programs reach.

// schemaPatch replaces one sub-schema of a tool's input schema that the registry refuses to
// compile although sdkgen renders it. The registry is stricter than sdkgen on purpose; the patched
// variant lets every program that uses the tool still run.
type schemaPatch struct {
	pointer string // JSON Pointer into the input schema
	with    string // the replacement sub-schema
	refusal string // what the registry's UNSUPPORTED_SCHEMA message says without this patch
}

// inputPatches lists, per tool of testdata/tools.json, every patch its input schema needs before
// the registry takes it. Each patch is necessary (TestDeclarations_sandbox_patchedSchemas) and
// together they suffice.
var inputPatches = map[string][]schemaPatch{
	"search": {
		// A draft-07 tuple (array-form items with additionalItems), which sdkgen understands but
		// the registry compiles as draft 2020-12, where items must be one schema. The replacement
		// is the same tuple in 2020-12 keywords, so the sandbox still checks what the program
		// passes against the type sdkgen rendered ([number, string?, ...boolean[]]).
		{
			pointer: "/properties/point",
			with:    `{"type":"array","prefixItems":[{"type":"number"},{"type":"string"}],"items":{"type":"boolean"},"minItems":1}`,
			refusal: "at '/properties/point/items': got array, want boolean or object",
		},
		// A remote $ref: sdkgen renders it as unknown, the registry refuses to load anything.
		// Nothing is known of the remote schema, so the variant accepts any value, as unknown does.
		{
			pointer: "/properties/remote",
			with:    `{}`,
			refusal: `no URLLoader registered for "https://example.com/schemas/remote.json"`,
		},
	},
}

// TestDeclarations_sandbox_patchedSchemas shows that the registry refuses exactly the tools of
// testdata/tools.json that inputPatches names, each patch for the reason it gives, and takes the
// patched variants.
func TestDeclarations_sandbox_patchedSchemas(t *testing.T) {
	t.Parallel()
	tools := sdkgen.LoadTools(t, "tools.json")
	for _, tool := range tools {
		patches := inputPatches[tool.Name]
		err := registry.New().Register(registry.Deployment, registryTool(tool, tool.InputSchema, nil))
		if len(patches) == 0 {
			require.NoError(t, err, "%s needs no patch", tool.Name)
			continue
		}
		require.ErrorIs(t, err, api.ErrUnsupportedSchema, tool.Name)
		for i, p := range patches {
			others := slices.Delete(slices.Clone(patches), i, i+1)
			schema := patchSchema(t, tool.InputSchema, others)
			err := registry.New().Register(registry.Deployment, registryTool(tool, schema, nil))
			require.ErrorIs(t, err, api.ErrUnsupportedSchema, "%s without the patch of %s", tool.Name, p.pointer)
			require.Contains(t, err.Error(), p.refusal, "%s without the patch of %s", tool.Name, p.pointer)
		}
		schema := patchSchema(t, tool.InputSchema, patches)
		require.NoError(t, registry.New().Register(registry.Deployment, registryTool(tool, schema, nil)), tool.Name)
	}
	for name := range inputPatches {
		require.True(t, slices.ContainsFunc(tools, func(tool api.Schema) bool { return tool.Name == name }),
			"inputPatches names %q, which is not in tools.json", name)
	}
}

// TestDeclarations_sandbox_typeCheckedProgramsRun runs every program that must type-check in the
// sandbox, against the tools of testdata/tools.json (patched per inputPatches) whose bodies return
// the values of testdata/outputs.json. Every run must succeed with every nested call accepted and
// return what wantResults says, or fail exactly as refusedInSandbox says; together the programs
// call every tool.
func TestDeclarations_sandbox_typeCheckedProgramsRun(t *testing.T) {
	tools := sdkgen.LoadTools(t, "tools.json")
	outputs := loadOutputs(t, tools)
	rt, err := wasmhost.New(t.Context(), wasmhost.NewConfig())
	require.NoError(t, err, "the guest must be built: run `make guest`")
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })

	programs := sdkgen.TypeCheckedPrograms(t, tools)
	called := map[string]bool{}
	for _, p := range programs {
		t.Run(p.Name, func(t *testing.T) {
			r, nested := runInSandbox(t, rt, bindTools(t, tools, outputs), p)
			if want, ok := refusedInSandbox[p.Name]; ok {
				want.check(t, p, r, nested)
				return
			}
			for _, n := range nested {
				require.True(t, n.Result.OK(), "%s: nested call %s(%s) failed: %v", p.Name, n.Tool, n.Args, n.Result.Err)
				called[n.Tool] = true
			}
			require.True(t, r.OK(), "%s failed in the sandbox:\n%s\nprogram:\n%s", p.Name, r.Text, p.Body)
			var v executor.RunCodeValue
			require.NoError(t, json.Unmarshal(r.Value, &v))
			require.True(t, len(v.Result) == 0 || json.Valid(v.Result), "%s returned %s", p.Name, v.Result)
			want, ok := expectedResult(p, outputs)
			require.True(t, ok, "no expected result for %s: add it to wantResults", p.Name)
			require.JSONEq(t, want, string(orNull(v.Result)), "%s returned something else", p.Name)
		})
	}
	for _, tool := range tools {
		require.True(t, called[tool.Name], "no program called %s", tool.Name)
	}
	for _, names := range []iter.Seq[string]{maps.Keys(refusedInSandbox), maps.Keys(wantResults)} {
		for name := range names {
			require.True(t, slices.ContainsFunc(programs, func(p sdkgen.Program) bool { return p.Name == name }),
				"%q is not a program that type-checks", name)
		}
	}
}

// runInSandbox runs p through run_code on an executor over reg, and returns its result and the
// result notifications of its nested calls.
func runInSandbox(t *testing.T, rt *wasmhost.Runtime, reg *registry.Registry, p sdkgen.Program) (api.Result, []executor.Notification) {
	t.Helper()
	var mu sync.Mutex
	var nested []executor.Notification
	cfg := executor.NewConfig().WithRuntime(rt).WithOnResult(func(n executor.Notification) {
		if n.Nested {
			mu.Lock()
			nested = append(nested, n)
			mu.Unlock()
		}
	})
	e, err := executor.New(reg, cfg)
	require.NoError(t, err)
	args, err := json.Marshal(map[string]string{"code": p.Body, "description": "sample program " + p.Name})
	require.NoError(t, err)
	r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: args})
	// Execute returns once every nested call has settled, and so notified.
	mu.Lock()
	defer mu.Unlock()
	return r, slices.Clone(nested)
}

// refusal is how a program that type-checks fails in the sandbox.
type refusal struct {
	// run is in the message of the run's CODE_RUN_FAILED error.
	run string
	// violations start the INVALID_ARGS violations of the program's one nested call, which fails;
	// nil means the program makes no nested call at all.
	violations []string
}

// refusedInSandbox lists the programs that type-check and still cannot run, each with why.
var refusedInSandbox = map[string]refusal{
	// Legitimate: TypeScript is coarser than JSON Schema here by design. sdkgen widens an enum of
	// more than 200 values to its base type (with a comment saying so) to keep the prompt short;
	// the input schema still holds the 250 values, and the executor refuses any other.
	"huge_enum_widened": {
		run:        "ToolCallError: invalid arguments for search",
		violations: []string{"at /country: value must be one of 'C000', 'C001'"},
	},
}

// check requires the run of p to have failed as want says.
func (want refusal) check(t *testing.T, p sdkgen.Program, r api.Result, nested []executor.Notification) {
	t.Helper()
	require.ErrorIs(t, r.AsError(), api.ErrCodeRunFailed, "%s must fail in the sandbox; if it runs now, remove it from refusedInSandbox", p.Name)
	require.Contains(t, r.Err.Message, want.run, p.Name)
	if want.violations == nil {
		require.Empty(t, nested, "%s makes no nested call", p.Name)
		return
	}
	require.Len(t, nested, 1, p.Name)
	require.ErrorIs(t, nested[0].Result.AsError(), api.ErrInvalidArgs, p.Name)
	err := nested[0].Result.Err
	require.Len(t, err.Violations, len(want.violations), "%s: %v", p.Name, err.Violations)
	for i, v := range want.violations {
		require.True(t, strings.HasPrefix(err.Violations[i], v), "%s: violation %q does not start with %q", p.Name, err.Violations[i], v)
	}
}

// wantResults is what each sample program of sdkgen's programCases returns, given the values of
// testdata/outputs.json. It shows that the properties a program reads through the declared types
// are where the tool's values have them (a misnamed one reads undefined, and the result changes).
// Examples of the prompt (bash_example, route_*) are covered by expectedResult.
var wantResults = map[string]string{
	"read_then_write":                   `2`,
	"parallel_calls":                    `"main.gowarning: dirty tree\n0"`,
	"catch_tool_call_error":             `true`,
	"branch_on_code":                    `{"content": "hello\nworld\n", "lines": 2, "truncated": false}`,
	"every_mapping":                     `["a.go0.75", "b.go0.5"]`,
	"recursive_types":                   `1`,
	"optional_argument_and_open_object": `[["go.mod", "src/"], ["go.mod", "src/"]]`,
	"colliding_type_names":              `"done"`,
	"timers":                            `null`,
	// An optional property set to undefined is left out, as JSON.stringify does.
	"undefined_optional_property": `{"stdout": "main.go\n", "stderr": "warning: dirty tree\n", "exit_code": 0, "duration_ms": 12}`,
}

// expectedResult returns the JSON a type-checked program returns: from wantResults, or for an
// example of the prompt, the value of the tool it calls.
func expectedResult(p sdkgen.Program, outputs map[string]json.RawMessage) (string, bool) {
	if want, ok := wantResults[p.Name]; ok {
		return want, true
	}
	if p.Name == "bash_example" {
		return `{"status": ` + string(outputs["bash"]) + `, "log": ` + string(outputs["bash"]) + `}`, true
	}
	if p.Route != "" {
		return string(outputs[p.Route]), true
	}
	return "", false
}

// orNull is v, or JSON null for no value.
func orNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// bindTools returns a registry in ptc mode holding every tool, its input schema patched per
// inputPatches, with a body that returns the tool's value from outputs.
func bindTools(t *testing.T, tools []api.Schema, outputs map[string]json.RawMessage) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, tool := range tools {
		schema := patchSchema(t, tool.InputSchema, inputPatches[tool.Name])
		require.NoError(t, reg.Register(registry.Deployment, registryTool(tool, schema, outputs[tool.Name])), tool.Name)
	}
	return reg
}

// registryTool is tool with the given input schema and a body returning out.
func registryTool(tool api.Schema, input, out json.RawMessage) registry.Tool {
	return registry.Tool{
		Name:            tool.Name,
		Description:     tool.Description,
		InputSchema:     input,
		OutputSchema:    tool.OutputSchema,
		ConcurrencySafe: true,
		Body: func(context.Context, api.Input) (api.Output, error) {
			return api.Output{Value: out}, nil
		},
	}
}

// loadOutputs reads testdata/outputs.json: one value per tool of tools, and no other.
func loadOutputs(t *testing.T, tools []api.Schema) map[string]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "outputs.json"))
	require.NoError(t, err)
	var outputs map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &outputs))
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Name
	}
	got := make([]string, 0, len(outputs))
	for name := range outputs {
		got = append(got, name)
	}
	require.ElementsMatch(t, names, got, "testdata/outputs.json must hold one value for every tool of tools.json")
	return outputs
}

// patchSchema returns schema with each patch's sub-schema replaced; the pointer must exist.
func patchSchema(t *testing.T, schema json.RawMessage, patches []schemaPatch) json.RawMessage {
	t.Helper()
	if len(patches) == 0 {
		return schema
	}
	doc := decodeJSON(t, schema)
	for _, p := range patches {
		tokens := strings.Split(strings.TrimPrefix(p.pointer, "/"), "/")
		parent := doc
		for _, tok := range tokens[:len(tokens)-1] {
			m, ok := parent.(map[string]any)
			require.True(t, ok, "%s: %q is not inside an object", p.pointer, tok)
			parent, ok = m[tok]
			require.True(t, ok, "%s: no %q", p.pointer, tok)
		}
		m, ok := parent.(map[string]any)
		require.True(t, ok, "%s: the parent is not an object", p.pointer)
		last := tokens[len(tokens)-1]
		_, ok = m[last]
		require.True(t, ok, "%s does not exist", p.pointer)
		m[last] = decodeJSON(t, json.RawMessage(p.with))
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// decodeJSON decodes JSON keeping numbers exact.
func decodeJSON(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), strconv.Quote(string(raw)))
	return v
}
