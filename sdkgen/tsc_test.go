package sdkgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// programCase is a sample run_code program over testdata/tools.json. wantCode is empty for a
// program that must type-check, else the one error tsc must report, whose message contains
// wantMsg.
type programCase struct {
	name     string
	body     string
	wantCode string
	wantMsg  string
}

var programCases = []programCase{
	{name: "read_then_write", body: `
const file = await tools.read({ path: "notes.txt" });
if (file.truncated) console.warn("truncated at line", file.lines);
await tools.write({ path: "copy.txt", content: file.content.toUpperCase(), mode: "append" });
return file.lines;`},
	{name: "parallel_calls", body: `
const [a, b] = await Promise.all([tools.bash({ command: "ls" }), tools.bash({ command: "pwd", timeout_ms: 500 })]);
return a.stdout.trim() + b.stderr + (a.exit_code + b.exit_code);`},
	{name: "catch_tool_call_error", body: `
try {
  const ok: boolean = await tools.delete({ path: "x" });
  return ok;
} catch (e) {
  if (e instanceof ToolCallError) {
    const n: ToolName = e.toolName;
    return { name: e.name, tool: n, message: e.message };
  }
  throw e;
}`},
	{name: "branch_on_code", body: `
try {
  return await tools.read({ path: "notes.txt" });
} catch (e) {
  if (e instanceof ToolCallError && e.code === "TOOL_TIMEOUT") return await tools.$call("read", { path: "notes.txt" });
  throw e;
}`},
	{name: "unknown_code", body: `
try { await tools.read({ path: "x" }); } catch (e) { if (e instanceof ToolCallError && e.code === "NOT_A_CODE") return 1; }`,
		wantCode: "TS2367", wantMsg: "no overlap"},
	{name: "every_mapping", body: `
const out = await tools.search({
  query: "q", limit: null, cursor: "c", exact: true, nothing: null, score: 0.5,
  tags: ["a"], mixed: ["a", 1], range: [1, 2], point: [1, "x", true, false], kind: "full-text", sort: -1,
  country: "C042", filter: { all: [{ field: "f", equals: "v" }] },
  labels: { a: "b" }, headers: { host: "h", accept: "x" }, options: { fuzzy: true, extra: [1, { x: null }] },
  combined: { a: "x", b: 2, c: "extra" }, anything: { deep: [1, "two"] }, remote: 42,
  class: "c", "content-type": "text/plain", "say \"hi\"\n*/": "quoted",
});
return out.hits.map((h) => h.path + h.score).concat(out.next ?? []);`},
	{name: "huge_enum_widened", body: `return await tools.search({ query: "q", country: "any string" });`},
	{name: "undefined_optional_property", body: `
const timeout: number | undefined = undefined;
return await tools.bash({ command: "ls", timeout_ms: timeout });`},
	{name: "recursive_types", body: `
const r = await tools["tree.walk"]({ root: { name: "a", children: [{ name: "b", children: [] }] } });
return r.again?.again?.visited ?? r.visited;`},
	{name: "optional_argument_and_open_object", body: `
const all = await tools.list();
const some = await tools.list({ dir: "src", other: [1, 2] });
return [all, some];`},
	{name: "colliding_type_names", body: `
await tools.write_file({ path: "a" });
await tools["write.file"]({ name: "b" });
return "done";`},
	{name: "timers", body: `
await new Promise<void>((resolve) => setTimeout(resolve, 10));
const t = setTimeout(() => console.log("never"), 5);
clearTimeout(t);
return null;`},
	{name: "openapi_nullable_is_not_null", body: `await tools.search({ query: "q", cursor: null });`,
		wantCode: "TS2322", wantMsg: "Type 'null' is not assignable to type 'string | undefined'"},
	{name: "misspelled_tool", body: `await tools.wirte({ path: "a", content: "b" });`,
		wantCode: "TS2551", wantMsg: "Property 'wirte' does not exist"},
	{name: "wrong_argument_type", body: `await tools.read({ path: 42 });`,
		wantCode: "TS2322", wantMsg: "Type 'number' is not assignable to type 'string'"},
	{name: "missing_required_property", body: `await tools.write({ path: "a" });`,
		wantCode: "TS2345", wantMsg: "Property 'content' is missing"},
	{name: "unknown_property_of_closed_object", body: `await tools.read({ path: "a", lenght: 3 });`,
		wantCode: "TS2353", wantMsg: "'lenght' does not exist"},
	{name: "literal_outside_enum", body: `await tools.write({ path: "a", content: "b", mode: "prepend" });`,
		wantCode: "TS2322", wantMsg: `Type '"prepend"' is not assignable to type '"overwrite" | "append" | undefined'`},
	{name: "missing_argument", body: `await tools.read();`,
		wantCode: "TS2554", wantMsg: "Expected 1 arguments, but got 0"},
	{name: "tuple_too_long", body: `await tools.search({ query: "q", range: [1, 2, 3] });`,
		wantCode: "TS2322", wantMsg: "Type 'number' is not assignable to type 'undefined'"},
	{name: "misuse_of_output", body: `const r = await tools.read({ path: "a" }); return r.content.toFixed(1);`,
		wantCode: "TS2551", wantMsg: "Property 'toFixed' does not exist on type 'string'"},
	{name: "untyped_output_needs_narrowing", body: `const l = await tools.list(); if (l === null) return 0; return l.length;`,
		wantCode: "TS2339", wantMsg: "Property 'length' does not exist"},
	{name: "wrong_tool_name_in_catch", body: `
try { await tools.list(); } catch (e) { if (e instanceof ToolCallError && e.toolName === "lsit") return 1; }`,
		wantCode: "TS2367", wantMsg: "This comparison appears to be unintentional"},
	{name: "recursive_type_checked", body: `await tools["tree.walk"]({ root: { name: "a", children: [{ children: [] }] } });`,
		wantCode: "TS2741", wantMsg: "Property 'name' is missing"},
}

// TestDeclarations_typeCheck_programs runs tsc once over the block for testdata/tools.json (as a
// global script, the way a prompt shows it), every sample program, the bash example of the SDK
// section and the route example of every tool.
func TestDeclarations_typeCheck_programs(t *testing.T) {
	t.Parallel()
	tools := loadTools(t, "tools.json")
	decls := mustDeclarations(t, tools)
	declLines := strings.Count(decls, "\n")

	cases := append(append([]programCase(nil), programCases...), exampleCases(t, tools)...)

	files := map[string]string{"block.ts": decls}
	for _, c := range cases {
		require.NotContains(t, files, c.name+".ts", "two cases are named %s", c.name)
		files[c.name+".ts"] = asModule(decls, c.body)
	}
	diags := runTSC(t, files)
	require.Empty(t, diags["block.ts"], "the block alone must type-check")
	for _, c := range cases {
		got := diags[c.name+".ts"]
		for _, d := range got {
			require.Greater(t, d.Line, declLines, "%s: error inside the declarations: %v", c.name, d)
		}
		if c.wantCode == "" {
			require.Empty(t, got, "%s must type-check:\n%s", c.name, c.body)
			continue
		}
		require.Len(t, got, 1, "%s: want exactly one error, got %v", c.name, got)
		require.Equal(t, c.wantCode, got[0].Code, "%s: %v", c.name, got[0])
		require.Contains(t, got[0].Msg, c.wantMsg, c.name)
	}
}

// exampleCases are the programs the prompt shows for tools: the bash example of the SDK section
// and the route example of every tool. All of them must type-check.
func exampleCases(t testing.TB, tools []api.Schema) []programCase {
	t.Helper()
	sdk, err := SDKSection(api.ModePTC, tools)
	require.NoError(t, err)
	bash := bashExample(tools)
	require.NotEmpty(t, bash)
	require.Contains(t, sdk, bash)
	cases := []programCase{{name: "bash_example", body: exampleCode(t, bash)}}
	for _, tool := range tools {
		cases = append(cases, programCase{name: "route_" + tool.Name, body: exampleCode(t, RouteExample(tool))})
	}
	return cases
}

// exampleCode extracts the program from a one-line `run_code {...}` example.
func exampleCode(t testing.TB, example string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(example, "run_code ")
	require.True(t, ok, example)
	var args struct{ Code, Description string }
	require.NoError(t, json.Unmarshal([]byte(rest), &args), example)
	require.NotEmpty(t, args.Code)
	require.NotEmpty(t, args.Description)
	return args.Code
}

// TestDeclarations_typeCheck_oddSchemas runs tsc over the block for testdata/odd.json, plus
// generated cases too large for a file (huge enums, deep nesting, many colliding names): it must
// parse and type-check, and a program must be able to call every tool. The block for no tools at
// all must type-check too.
func TestDeclarations_typeCheck_oddSchemas(t *testing.T) {
	t.Parallel()
	tools := append(loadTools(t, "odd.json"), generatedOddTools()...)
	decls := mustDeclarations(t, tools)
	var body strings.Builder
	for i, tool := range tools {
		fmt.Fprintf(&body, "const r%d = await %s(undefined as never);\n", i, toolAccess(tool.Name))
	}
	body.WriteString("return null;")
	empty := mustDeclarations(t, nil)
	files := map[string]string{
		"odd_block.ts":     decls,
		"odd_program.ts":   asModule(decls, body.String()),
		"empty_program.ts": asModule(empty, "return [tools, ToolCallError];"),
	}
	diags := runTSC(t, files)
	require.Empty(t, diags, "odd schemas must give valid TypeScript:\n%s", decls)
}
