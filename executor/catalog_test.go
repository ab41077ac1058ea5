package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

const forecastInput = `{"type":"object","properties":{"city":{"type":"string","description":"City name."},"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"],"additionalProperties":false}`

// largeSet registers n tools: weather.forecast, fs.read_file, fs.write_file and filler tools
// named svc_NNN.op whose descriptions share common words, so that a search must rank.
func largeSet(t *testing.T, n int) *registry.Registry {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	echo := func(ctx context.Context, in api.Input) (api.Output, error) {
		return api.Output{Value: in.Args}, nil
	}
	add := func(name, desc, input string) {
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
			Name: name, Description: desc, InputSchema: json.RawMessage(input), ConcurrencySafe: true, Body: echo,
		}))
	}
	add("weather.forecast", "Get the weather forecast for a city. Days default to 3.", forecastInput)
	add("fs.read_file", "Read a text file from the workspace.", objSchema)
	add("fs.write_file", "Write a text file to the workspace.", objSchema)
	for i := 3; i < n; i++ {
		add(fmt.Sprintf("svc_%03d.op", i), fmt.Sprintf("Manage record %d of the inventory service (list, get, update).", i), objSchema)
	}
	return reg
}

// A large tool set's program finds its tools in the sandbox: $search ranks the right one first,
// $describe gives its declaration and schemas, and the namespace reaches it.
func TestRunCode_largeToolSet_searchAndDescribe(t *testing.T) {
	reg := largeSet(t, 300)
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: runCode(`
		const hits = tools.$search("weather forecast for a city");
		const d = tools.$describe(hits[0].name);
		const got = await tools.weather.forecast({city: "Paris"});
		return {hits: hits.slice(0, 2), d, got, read: tools.$search("read file", 1), frozen: Object.isFrozen(d.inputSchema)};
	`)})
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	var out struct {
		Hits []struct{ Name, Description string }
		D    struct {
			Name, Description, Declaration string
			InputSchema                    json.RawMessage
			OutputSchema                   json.RawMessage
		}
		Got    map[string]string
		Read   []struct{ Name string }
		Frozen bool
	}
	require.NoError(t, json.Unmarshal(v.Result, &out))
	require.Equal(t, "weather.forecast", out.Hits[0].Name)
	require.Equal(t, "Get the weather forecast for a city.", out.Hits[0].Description)
	require.Equal(t, "weather.forecast", out.D.Name)
	require.Contains(t, out.D.Declaration, "type WeatherForecastArgs = {")
	require.Contains(t, out.D.Declaration, "forecast(args: WeatherForecastArgs): Promise<JsonValue>;")
	require.JSONEq(t, forecastInput, string(out.D.InputSchema))
	require.JSONEq(t, "null", string(out.D.OutputSchema))
	require.Equal(t, map[string]string{"city": "Paris"}, out.Got)
	require.Equal(t, []struct{ Name string }{{"fs.read_file"}}, out.Read)
	require.True(t, out.Frozen)
}

// $search and $describe refuse what they cannot answer, with what to do instead.
func TestRunCode_largeToolSet_refusals(t *testing.T) {
	e := newExecutor(t, largeSet(t, 100), executor.NewConfig().WithRuntime(realRuntime(t)))
	for _, tc := range []struct{ code, want string }{
		{`return tools.$describe("nope")`, `tools.$describe("nope"): no bound tool has that name; find one with tools.$search`},
		{`return tools.$search(3)`, "query must be a string"},
		{`return tools.$search("x", 0)`, "limit must be a number from 1 to 50"},
		{`return tools.nope({})`, `tools.nope is not a bound tool; find the right name with tools.$search`},
		{`return tools.$search("inventory", 500).length`, ""}, // clamped to 50
	} {
		r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: runCode(tc.code)})
		if tc.want == "" {
			require.True(t, r.OK(), r.Text)
			require.Contains(t, r.Text, "50")
			continue
		}
		require.False(t, r.OK(), tc.code)
		require.Contains(t, r.Text, tc.want, tc.code)
	}
}

// A small tool set has every declaration in the prompt, and no catalog: $search says so.
func TestRunCode_smallToolSet_noCatalog(t *testing.T) {
	f := newFixture(t, api.ModePTC)
	e := newExecutor(t, f.reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: runCode(`return tools.$search("read")`)})
	require.False(t, r.OK())
	require.Contains(t, r.Text, "tools.$search is not available: every bound tool is declared in the prompt")
}

// The guest gets a catalog exactly when sdkgen.Deferred says the set is large.
func TestCatalogFor_threshold(t *testing.T) {
	schemas := func(n int) []api.Schema {
		out := make([]api.Schema, n)
		for i := range out {
			out[i] = api.Schema{Name: fmt.Sprintf("t%d", i)}
		}
		return out
	}
	for _, tc := range []struct {
		n    int
		want bool
	}{{sdkgen.DeferTools - 1, false}, {sdkgen.DeferTools, false}, {sdkgen.DeferTools + 1, true}} {
		c, err := executor.CatalogFor(schemas(tc.n))
		require.NoError(t, err)
		require.Equal(t, tc.want, c != "", "%d tools", tc.n)
	}
}

// One entry over the entry bound keeps its name and summary and says why; at the bound it is
// whole.
func TestBuildCatalog_entryBound(t *testing.T) {
	tools := []api.Schema{{Name: "weather.forecast", Description: "Get the forecast. For a city.", InputSchema: json.RawMessage(forecastInput)}}
	whole, err := executor.BuildCatalog(tools, executor.CatalogEntryBytes, executor.CatalogBytes)
	require.NoError(t, err)
	size := entrySize(t, whole, 0)
	for _, tc := range []struct {
		limit int
		cut   bool
	}{{size + 1, false}, {size, false}, {size - 1, true}} {
		text, err := executor.BuildCatalog(tools, tc.limit, executor.CatalogBytes)
		require.NoError(t, err)
		e := entries(t, text)[0]
		if !tc.cut {
			require.Equal(t, whole, text, "limit %d", tc.limit)
			continue
		}
		require.Equal(t, "Get the forecast.", e.Description)
		require.Contains(t, e.Declaration, fmt.Sprintf("are over the catalog's limit of %d bytes for one tool", tc.limit))
		require.Contains(t, e.Declaration, `tools.$call("weather.forecast", args)`)
		require.JSONEq(t, "null", string(e.InputSchema))
	}
}

// Past the catalog's bound, the entries that do not fit keep their names and summaries.
func TestBuildCatalog_totalBound(t *testing.T) {
	tools := []api.Schema{
		{Name: "a", Description: "First.", InputSchema: json.RawMessage(objSchema)},
		{Name: "b", Description: "Second.", InputSchema: json.RawMessage(objSchema)},
		{Name: "c", Description: "Third.", InputSchema: json.RawMessage(objSchema)},
	}
	whole, err := executor.BuildCatalog(tools, executor.CatalogEntryBytes, executor.CatalogBytes)
	require.NoError(t, err)
	all := entrySize(t, whole, 0) + entrySize(t, whole, 1) + entrySize(t, whole, 2)
	for _, tc := range []struct {
		limit   int
		lastCut bool
	}{{all + 1, false}, {all, false}, {all - 1, true}} {
		text, err := executor.BuildCatalog(tools, executor.CatalogEntryBytes, tc.limit)
		require.NoError(t, err)
		es := entries(t, text)
		require.Contains(t, es[1].Declaration, "interface Tools {")
		if !tc.lastCut {
			require.Equal(t, whole, text)
			continue
		}
		require.Equal(t, "c", es[2].Name)
		require.Contains(t, es[2].Declaration, fmt.Sprintf("the catalog reached its limit of %d bytes before this tool", tc.limit))
	}
}

// A tool set's catalog is built once and reused; a changed tool set gets its own; the cache
// keeps at most CatalogCacheSize.
func TestCatalogCache_get(t *testing.T) {
	c := executor.NewCatalogCache()
	set := func(desc string) []api.Schema {
		return []api.Schema{{Name: "a", Description: desc, InputSchema: json.RawMessage(objSchema)}}
	}
	first, err := c.Get(set("One."))
	require.NoError(t, err)
	again, err := c.Get(set("One."))
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, 1, c.Len())
	other, err := c.Get(set("Two."))
	require.NoError(t, err)
	require.NotEqual(t, first, other)
	require.Contains(t, other, "Two.")
	require.Equal(t, 2, c.Len())
	for i := range executor.CatalogCacheSize + 5 {
		_, err := c.Get(set(fmt.Sprintf("Set %d.", i)))
		require.NoError(t, err)
	}
	require.Equal(t, executor.CatalogCacheSize, c.Len())
}

// A tool set that cannot be declared fails the run as INTERNAL, naming the catalog.
func TestCatalogCache_get_badSchema(t *testing.T) {
	_, err := executor.NewCatalogCache().Get([]api.Schema{{Name: "a", InputSchema: json.RawMessage(`[1]`)}})
	require.ErrorContains(t, err, `tool "a": input schema: not a JSON Schema`)
}

func entries(t *testing.T, text string) []sdkgen.CatalogEntry {
	t.Helper()
	var es []sdkgen.CatalogEntry
	require.NoError(t, json.Unmarshal([]byte(text), &es))
	return es
}

func entrySize(t *testing.T, text string, i int) int {
	e := entries(t, text)[i]
	return len(e.Name) + len(e.Summary) + len(e.Description) + len(e.Declaration) + len(e.InputSchema) + len(e.OutputSchema)
}

// Dotted names are reached as paths when every segment is an identifier and nothing clashes;
// otherwise only with brackets. Namespaces are frozen and explain unknown members.
func TestRunCode_dottedNames_namespaces(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	echoName := func(name string) registry.Body {
		return func(ctx context.Context, in api.Input) (api.Output, error) { return api.ValueOutput(name) }
	}
	for _, name := range []string{"fs.read_file", "fs.write_file", "a.b.c", "git", "git.status", "x-y.z", "db.then", "m.n", "m.n.o"} {
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: name, Body: echoName(name), ConcurrencySafe: true}))
	}
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	for _, tc := range []struct{ code, want string }{
		{`return await tools.fs.read_file()`, `"fs.read_file"`},
		{`return await tools.a.b.c()`, `"a.b.c"`},
		{`return tools.fs.read_file === tools["fs.read_file"]`, "true"},
		{`return [Object.isFrozen(tools.fs), Object.isFrozen(tools.a.b), Object.keys(tools.fs)]`, `[true,true,["read_file","write_file"]]`},
		{`return [typeof tools.fs.toString, typeof tools.fs.constructor, "x" in tools.fs]`, `["undefined","undefined",false]`},
		{`return await tools["git.status"]()`, `"git.status"`},
		{`return typeof tools.git.status`, `"undefined"`},                      // git is a tool: no namespace
		{`return await tools["db.then"]()`, `"db.then"`},                       // then would make a thenable
		{`return await tools["m.n"]()`, `"m.n"`},                               // m.n is both a tool and a prefix
		{`return Object.keys(tools).filter(k => !k.includes("."))`, `["git"]`}, // namespaces are not enumerable
	} {
		r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: runCode(tc.code)})
		require.True(t, r.OK(), "%s: %s", tc.code, r.Text)
		var v executor.RunCodeValue
		require.NoError(t, json.Unmarshal(r.Value, &v))
		require.JSONEq(t, tc.want, string(v.Result), tc.code)
	}
	for _, tc := range []struct{ code, want string }{
		{`return tools.fs.nope()`, "tools.fs.nope is not a bound tool; see tools.fs for the ones there are"},
		{`return tools.db`, "tools.db is not a bound tool"},
		{`return tools.m`, "tools.m is not a bound tool"},
		{`tools.fs.x = 1`, "tools is read-only"},
	} {
		r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: runCode(tc.code)})
		require.False(t, r.OK(), tc.code)
		require.Contains(t, r.Text, tc.want, tc.code)
	}
}

// A program that replaces the built-ins the catalog uses only changes its own code: $search and
// $describe answer as before.
func TestRunCode_largeToolSet_builtinsReplaced(t *testing.T) {
	e := newExecutor(t, largeSet(t, 100), executor.NewConfig().WithRuntime(realRuntime(t)))
	r := e.Execute(t.Context(), executor.Call{Name: registry.RunCode, Args: runCode(`
		const boom = () => { throw new Error("replaced built-in called"); };
		RegExp.prototype[Symbol.split] = boom;
		String.prototype.split = boom;
		String.prototype.toLowerCase = boom;
		String.prototype.indexOf = boom;
		Array.prototype.sort = boom;
		JSON.parse = boom;
		Object.freeze = boom;
		Object.defineProperty(Object.prototype, "summary", { get: boom, set: boom });
		return [tools.$search("weather forecast", 1)[0].name, tools.$describe("fs.read_file").name];
	`)})
	require.True(t, r.OK(), r.Text)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	require.JSONEq(t, `["weather.forecast","fs.read_file"]`, string(v.Result))
}
