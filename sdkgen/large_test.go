package sdkgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

const (
	plainInput     = `{"type":"object","properties":{"id":{"type":"string"}},"additionalProperties":false}`
	forecastInput  = `{"type":"object","properties":{"city":{"type":"string","description":"City name."},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"],"additionalProperties":false}`
	forecastOutput = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"array","items":{"type":"object","properties":{"high_c":{"type":"number"},"low_c":{"type":"number"}},"required":["high_c","low_c"]}}},"required":["city","days"]}`
)

// largeTools returns n tools: weather.forecast (with an output schema), fs.read_file and filler
// tools svc_NNN.op whose descriptions share words.
func largeTools(n int) []api.Schema {
	tools := []api.Schema{
		{Name: "weather.forecast", Description: "Get the weather forecast for a city. Days default to 3.",
			InputSchema: json.RawMessage(forecastInput), OutputSchema: json.RawMessage(forecastOutput)},
		{Name: "fs.read_file", Description: "Read a text file from the workspace.", InputSchema: json.RawMessage(plainInput)},
	}
	for i := len(tools); i < n; i++ {
		tools = append(tools, api.Schema{Name: fmt.Sprintf("svc_%03d.op", i),
			Description: fmt.Sprintf("Manage record %d of the inventory service: list, get and update its fields.", i), InputSchema: json.RawMessage(plainInput)})
	}
	return tools
}

// A large tool set's SDK section lists names and one-line descriptions, explains $search and
// $describe, declares no tool's types, and stays within its budget however many tools there are.
func TestSDKSection_largeToolSet(t *testing.T) {
	for _, tc := range []struct {
		n        int
		listed   string // a line the listing has
		unlisted bool   // some tools are only counted
	}{
		{300, "\n- weather.forecast: Get the weather forecast for a city.\n", false},
		{3000, "\n- fs.read_file\n", true},
	} {
		text, err := sdkgen.SDKSection(api.ModePTC, largeTools(tc.n))
		require.NoError(t, err)
		require.LessOrEqual(t, len(text), sdkgen.SectionBytes, "%d tools", tc.n)
		require.Contains(t, text, tc.listed)
		require.Contains(t, text, "tools.$search(\"what it does\")")
		require.Contains(t, text, "$describe(name: string): ToolDescription;")
		require.Contains(t, text, "`tools.fs.read_file(args)` is `tools[\"fs.read_file\"](args)`")
		require.NotContains(t, text, "WeatherForecastArgs")
		require.Equal(t, tc.unlisted, strings.Contains(text, "more (find them with tools.$search)"), "%d tools", tc.n)
		if !tc.unlisted {
			listed := text[strings.Index(text, "The bound tools (name: what it does):"):]
			require.Equal(t, tc.n, strings.Count(listed, "\n- "), "every tool listed")
		}
	}
	// run_code's description, where the SDK goes for a client that sees only run_code, defers too.
	desc := sdkgen.DescribeRunCode("", "Run a program.", largeTools(300))
	require.LessOrEqual(t, len(desc), sdkgen.SectionBytes)
	require.Contains(t, desc, "- weather.forecast: Get the weather forecast for a city.")
}

// A program written from $describe's output, run in the sandbox, type-checks against the large
// set's declarations plus that output, and runs; one that misreads it fails tsc.
func TestCatalog_sandbox_describedProgramTypeChecks(t *testing.T) {
	tools := largeTools(300)
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, s := range tools {
		body := func(ctx context.Context, in api.Input) (api.Output, error) { return api.ValueOutput("ok") }
		if s.Name == "weather.forecast" {
			body = func(ctx context.Context, in api.Input) (api.Output, error) {
				return api.ValueOutput(map[string]any{"city": "Paris", "days": []map[string]float64{{"high_c": 12, "low_c": 4}}})
			}
		}
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: s.Name, Description: s.Description,
			InputSchema: s.InputSchema, OutputSchema: s.OutputSchema, ConcurrencySafe: true, Body: body}))
	}
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(testkit.Sandbox(t)))
	require.NoError(t, err)
	run := func(code string) api.Result {
		args, err := json.Marshal(map[string]string{"code": code})
		require.NoError(t, err)
		return e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: args})
	}
	r := run(`return tools.$describe(tools.$search("weather forecast for a city")[0].name).declaration;`)
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	var declaration string
	require.NoError(t, json.Unmarshal(v.Result, &declaration))
	require.Contains(t, declaration, "forecast(args: WeatherForecastArgs): Promise<WeatherForecastOutput>;")

	good := `
const f = await tools.weather.forecast({ city: "Paris", days: 3 });
const same = await tools["weather.forecast"]({ city: "Paris" });
const hits = tools.$search("inventory record", 5);
return { city: f.city, high: Math.max(...f.days.map((d) => d.high_c)), same: same.city === f.city, first: hits[0]?.name };`
	bad := `
const f = await tools.weather.forecast({ city: "Paris", days: "3" });
return f.city;`
	decls := sdkgen.DeferredDeclarations() + "\n" + declaration
	diags := sdkgen.RunTSC(t, map[string]string{"good.ts": sdkgen.AsModule(decls, good), "bad.ts": sdkgen.AsModule(decls, bad)})
	require.Empty(t, diags["good.ts"], "a program written from $describe must type-check")
	require.Len(t, diags["bad.ts"], 1, "%v", diags["bad.ts"])
	require.Equal(t, "TS2322", diags["bad.ts"][0].Code)

	r = run(good)
	require.True(t, r.OK(), r.Text)
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.JSONEq(t, `{"city":"Paris","high":12,"same":true,"first":"svc_002.op"}`, string(v.Result))
}

// Every catalog declaration of a large set merges with the others: all of them at once
// type-check, with a program that calls tools through each kind of name.
func TestCatalog_declarationsMerge(t *testing.T) {
	tools := append(largeTools(80),
		api.Schema{Name: "then", InputSchema: json.RawMessage(plainInput)},
		api.Schema{Name: "a.b.c", InputSchema: json.RawMessage(plainInput)},
		api.Schema{Name: "a.b.d", InputSchema: json.RawMessage(plainInput)},
		api.Schema{Name: "x-y.z", InputSchema: json.RawMessage(plainInput)})
	entries, err := sdkgen.Catalog(tools)
	require.NoError(t, err)
	require.Len(t, entries, len(tools))
	var b strings.Builder
	b.WriteString(sdkgen.DeferredDeclarations())
	for _, e := range entries {
		b.WriteString("\n" + e.Declaration)
	}
	body := `
await tools.a.b.c({ id: "1" });
await tools.a.b.d({});
await tools["x-y.z"]({});
await tools.$call("then", { id: "x" });
const f = await tools.weather.forecast({ city: "Oslo" });
return f.days.length + ((await tools.svc_042.op({})) === null ? 0 : 1);`
	diags := sdkgen.RunTSC(t, map[string]string{"all.ts": sdkgen.AsModule(b.String(), body)})
	require.Empty(t, diags["all.ts"])
}

// Dotted names are declared as namespaces in the full declarations, a program using them
// type-checks, a path that is not declared does not, and the program runs in the sandbox.
func TestDeclarations_namespaces_typeCheckAndRun(t *testing.T) {
	tools := []api.Schema{
		{Name: "fs.read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)},
		{Name: "fs.write_file", InputSchema: json.RawMessage(plainInput)},
		{Name: "a.b.c", InputSchema: json.RawMessage(plainInput)},
		{Name: "git", InputSchema: json.RawMessage(plainInput)},
		{Name: "git.status", InputSchema: json.RawMessage(plainInput)},
	}
	decls, err := sdkgen.Declarations(tools)
	require.NoError(t, err)
	require.Contains(t, decls, "  fs: {\n    /** Read a file. */\n    read_file(args: FsReadFileArgs): Promise<FsReadFileOutput>;\n")
	require.Contains(t, decls, "  a: {\n    b: {\n      c(args?: ABCArgs): Promise<JsonValue>;\n    };\n  };\n")
	good := `
const f = await tools.fs.read_file({ path: "x" });
await tools.fs.write_file({});
await tools.a.b.c();
await tools["git.status"]({});
return f.content.length;`
	diags := sdkgen.RunTSC(t, map[string]string{
		"good.ts":    sdkgen.AsModule(decls, good),
		"nope.ts":    sdkgen.AsModule(decls, `return tools.fs.nope({});`),
		"clashed.ts": sdkgen.AsModule(decls, `return tools.git.status({});`),
	})
	require.Empty(t, diags["good.ts"])
	for _, f := range []string{"nope.ts", "clashed.ts"} {
		require.Len(t, diags[f], 1, f)
		require.Equal(t, "TS2339", diags[f][0].Code, f)
	}

	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, s := range tools {
		out := any("ok")
		if s.Name == "fs.read_file" {
			out = map[string]string{"content": "hello"}
		}
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: s.Name, InputSchema: s.InputSchema, OutputSchema: s.OutputSchema,
			ConcurrencySafe: true, Body: func(ctx context.Context, in api.Input) (api.Output, error) { return api.ValueOutput(out) }}))
	}
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(testkit.Sandbox(t)))
	require.NoError(t, err)
	args, err := json.Marshal(map[string]string{"code": good})
	require.NoError(t, err)
	r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: args})
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.Equal(t, "5", string(v.Result))
}

// In Python too: the listing, the catalog's functions by their Python spelling, within the budget.
func TestPythonSDKSection_largeToolSet(t *testing.T) {
	for _, n := range []int{300, 3000} {
		text, err := sdkgen.PythonSDKSection(api.ModePTC, largeTools(n))
		require.NoError(t, err)
		require.LessOrEqual(t, len(text), sdkgen.SectionBytes, "%d tools", n)
		require.Contains(t, text, `tools["$search"]("what it does")`)
		require.Contains(t, text, "def __getitem__(self, name: Literal[\"$describe\"]) -> Describe: ...")
		require.Contains(t, text, "`tools.fs.read_file(...)` is `tools[\"fs.read_file\"](...)`")
		require.NotContains(t, text, "WeatherForecastArgs")
		require.Equal(t, n == 3000, strings.Contains(text, `more (find them with tools["$search"])`), "%d tools", n)
	}
	desc := sdkgen.DescribeRunCodeIn(api.LanguagePython)("", "Run a program.", largeTools(3000))
	require.LessOrEqual(t, len(desc), sdkgen.SectionBytes)
	require.Contains(t, desc, `more (find them with tools["$search"])`)
}
