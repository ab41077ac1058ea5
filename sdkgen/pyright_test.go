package sdkgen_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/examples/injection"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

// pyCase is a sample program over one SDK. wantRule is empty for a program that must
// type-check; else pyright must report errors on one line only, one of them of rule wantRule
// with a message containing wantMsg.
type pyCase struct {
	sdk, name, body   string
	wantRule, wantMsg string
}

var pyCases = []pyCase{
	// examples/shop: the README's program, in Python.
	{sdk: "shop", name: "cheapest", body: `
products = await tools.search(tag="keyboard")
quotes = await asyncio.gather(*(tools.quote(sku=p["sku"]) for p in products))
in_stock = [q for q in quotes if q["in_stock"] > 0]
best = min(in_stock, key=lambda q: q["price_cents"])
order = await tools.order({"sku": best["sku"]})
print(order["order_id"], order["status"].upper(), best["supplier"])`},
	{sdk: "shop", name: "wrong_argument_type", body: `await tools.quote(sku=42)`,
		wantRule: "reportArgumentType", wantMsg: `"Literal[42]" is not assignable to "str"`},
	{sdk: "shop", name: "wrong_dict_argument", body: `await tools.order({"sku": "k", "qty": 2})`,
		wantRule: "reportArgumentType", wantMsg: `is not assignable to item "extra_items"`},
	{sdk: "shop", name: "misread_result", body: `q = await tools.quote(sku="k")
n: str = q["price_cents"]`, wantRule: "reportAssignmentType", wantMsg: `"int" is not assignable to "str"`},
	{sdk: "shop", name: "unknown_tool", body: `await tools.refund(sku="k")`,
		wantRule: "reportAttributeAccessIssue", wantMsg: `Cannot access attribute "refund"`},

	// examples/injection: handles.
	{sdk: "injection", name: "handles", body: `
inbox = await tools.read_inbox()
print(inbox.size, inbox.labels["integrity"] == "untrusted", inbox.tool)
summary = await tools.summarise(text=await inbox.text())
text: str = await summary.text()
await tools.send_email(to="boss@corp.test", body=text)
try:
    await tools.transfer(to="acct", amount=12.5)
except ToolCallError as e:
    if e.code == "DENIED":
        await tools.post_channel(text=f"{e.tool}: {e}")`},
	{sdk: "injection", name: "handle_is_not_its_value", body: `inbox = await tools.read_inbox()
print(inbox["from"])`, wantRule: "reportIndexIssue", wantMsg: `"__getitem__" method not defined on type "Handle`},
	{sdk: "injection", name: "wrong_amount", body: `await tools.transfer(to="acct", amount="900")`,
		wantRule: "reportArgumentType", wantMsg: `"Literal['900']" is not assignable to "float"`},

	// testdata/python.json: names and shapes Python makes hard.
	{sdk: "torture", name: "odd_names", body: `
entries = await tools.list(dir="src", str=1, list=["a"], kwargs="k", other=3)
kinds = [e["kind"] for e in entries if e["kind"] != "link"]
s: str = await tools.str(int=1.5)
j = await tools.JsonValue(Any="a", JsonValue=1)
n: int = await tools["class"](name="x")
await tools["odd-name"]({"x-y": "a", "z": 1})
await tools["odd-name"](z=1)
ok: bool = await tools["needs-dict"]({"content-type": "text/plain", "from": "me"})
await tools["import.x"](anything=[1, {"a": None}])
await tools["__getitem__"](k="v")
print(kinds, s, j["Literal"], n, ok)`},
	{sdk: "torture", name: "namespaces", body: `
f = await tools.fs.read_file(path="a.txt")
owner = f["meta"]["owner"]
uid: int = owner["uid"]
name = owner.get("name", "?")
size: int = (await tools.fs.deep.stat(path="a.txt"))["size"]
print(f["text"], uid, name, size)`},
	{sdk: "torture", name: "unions_and_recursion", body: `
area = await tools.shape(shape={"kind": "circle", "r": 1.0}, color=None, tags=["a", 1],
    tree={"value": 1, "children": [{"value": 2, "children": []}]}, pair=["a", 1], meta={"k": "v"}, weird=3)
if area is not None:
    print(area["area"] * 2)
await tools.shape({"shape": {"kind": "rect", "w": 1, "h": 2}, "color": "red", "scale": None})
await tools.ping()
doc = await tools.read_doc(id="1")
subject: str = (await doc.json())["subject"]
print(subject)`},
	{sdk: "torture", name: "unknown_keyword", body: `await tools.fs.read_file(path="a", mode="r")`,
		wantRule: "reportCallIssue", wantMsg: `No overloads for "read_file" match`},
	{sdk: "torture", name: "wrong_enum_member", body: `await tools.shape(shape={"kind": "triangle", "r": 1.0})`,
		wantRule: "reportArgumentType", wantMsg: `"shape"`},
	{sdk: "torture", name: "missing_required", body: `await tools["needs-dict"]({"from": "me"})`,
		wantRule: "reportArgumentType", wantMsg: `"content-type" is required in "NeedsDictArgs"`},
	{sdk: "torture", name: "unknown_bracket_name", body: `await tools["no-such-tool"]()`,
		wantRule: "reportCallIssue", wantMsg: `No overloads for "__getitem__"`},
	{sdk: "torture", name: "not_awaited", body: `f = tools.fs.read_file(path="a")
print(f["text"])`, wantRule: "reportIndexIssue", wantMsg: `"__getitem__" method not defined on type "CoroutineType`},
}

// toolsJSON reads a JSON array of tools in either spelling of the schema keys (sdkgen's testdata
// and examples/shop/tools.json).
func toolsJSON(t *testing.T, path string) []api.Schema {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var files []struct {
		Name, Description string
		InputSchema       json.RawMessage `json:"inputSchema"`
		InputSchemaSnake  json.RawMessage `json:"input_schema"`
		OutputSchema      json.RawMessage `json:"outputSchema"`
		OutputSchemaSnake json.RawMessage `json:"output_schema"`
		Handle            bool
	}
	var wrapped struct {
		Tools json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(data, &wrapped) == nil && wrapped.Tools != nil {
		data = wrapped.Tools
	}
	require.NoError(t, json.Unmarshal(data, &files))
	out := make([]api.Schema, len(files))
	for i, f := range files {
		in, o := f.InputSchema, f.OutputSchema
		if in == nil {
			in = f.InputSchemaSnake
		}
		if o == nil {
			o = f.OutputSchemaSnake
		}
		out[i] = api.Schema{Name: f.Name, Description: f.Description, InputSchema: in, OutputSchema: o, Handle: f.Handle}
	}
	return out
}

// injectionTools is examples/injection's world as a program sees it (its handles included).
func injectionTools(t *testing.T) []api.Schema {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	for _, tool := range (&injection.World{}).Tools() {
		require.NoError(t, reg.Register(registry.Deployment, tool))
	}
	tools, err := reg.Bindable(registry.Deployment)
	require.NoError(t, err)
	return tools
}

// The stubs of the shop example, the injection suite and the torture sets type-check under
// pyright, and so does every program written against them as a program would be, while each
// misuse is the one error expected.
func TestPythonStub_pyright(t *testing.T) {
	sdks := map[string][]api.Schema{
		"shop":      toolsJSON(t, filepath.Join("..", "examples", "shop", "tools.json")),
		"injection": injectionTools(t),
		"torture":   toolsJSON(t, filepath.Join("testdata", "python.json")),
		"tools":     toolsJSON(t, filepath.Join("testdata", "tools.json")),
		"odd":       toolsJSON(t, filepath.Join("testdata", "odd.json")),
		"empty":     nil,
	}
	files := map[string]string{}
	for name, tools := range sdks {
		stub, err := sdkgen.PythonStub(tools)
		require.NoError(t, err, name)
		files["sdk_"+name+".pyi"] = stub
		// The prompt's declarations in Python (PythonSDKSection) are a stub by themselves: they
		// type-check as one (forward references and names shadowing builtins, as in the SDK's
		// stub), and programs type-check against them as against the stub.
		files["prompt_"+name+".pyi"] = promptPython(t, tools)
	}
	files["prompt_deferred.pyi"] = promptPython(t, largeToolSet(300))
	files["prog_prompt_shop.py"] = pyProgram("prompt_shop", pyCases[0].body)
	files["prog_prompt_deferred.py"] = pyProgram("prompt_deferred", `
matches = tools["$search"]("read a file", limit=3)
d = tools["$describe"](matches[0]["name"])
text = await tools.fs_read(path="a.txt")
other = await tools["tool-7"]({"x": 1})
print(d["declaration"], d["inputSchema"], text, other)`)
	files["prog_prompt_deferred_bad.py"] = pyProgram("prompt_deferred", `n: int = tools["$search"]("x")`)
	require.Contains(t, files["sdk_injection.pyi"], "class Handle[T = JsonValue]:")
	for _, c := range pyCases {
		files["prog_"+c.sdk+"_"+c.name+".py"] = pyProgram("sdk_"+c.sdk, c.body)
	}
	// The same program, the stub saved as __builtins__.pyi beside it: tools is a global.
	files["builtins/__builtins__.pyi"] = files["sdk_shop.pyi"]
	files["builtins/prog.py"] = "async def program() -> None:\n    print((await tools.quote(sku=\"k\"))[\"supplier\"])\n"
	files["builtins/bad.py"] = "async def program() -> None:\n    await tools.quote(sku=1)\n"

	diags := runPyright(t, files)
	for name := range sdks {
		require.Empty(t, diags["sdk_"+name+".pyi"], "the %s stub:\n%s", name, files["sdk_"+name+".pyi"])
	}
	for _, c := range pyCases {
		file := "prog_" + c.sdk + "_" + c.name + ".py"
		got := diags[file]
		if c.wantRule == "" {
			require.Empty(t, got, "%s:\n%s", file, files[file])
			continue
		}
		require.NotEmpty(t, got, "%s: want a %s error:\n%s", file, c.wantRule, files[file])
		found := false
		for _, d := range got {
			require.Equal(t, got[0].Line, d.Line, "%s: errors on more than one line: %v", file, got)
			found = found || d.Rule == c.wantRule && strings.Contains(d.Msg, c.wantMsg)
		}
		require.True(t, found, "%s: no %s error containing %q: %v", file, c.wantRule, c.wantMsg, got)
	}
	for name := range sdks {
		require.Empty(t, diags["prompt_"+name+".pyi"], "the %s prompt:\n%s", name, files["prompt_"+name+".pyi"])
	}
	require.Empty(t, diags["prompt_deferred.pyi"], files["prompt_deferred.pyi"])
	require.Empty(t, diags["prog_prompt_shop.py"])
	require.Empty(t, diags["prog_prompt_deferred.py"])
	require.Len(t, diags["prog_prompt_deferred_bad.py"], 1, "a search's result is a list")
	require.Empty(t, diags["builtins/prog.py"])
	require.Len(t, diags["builtins/bad.py"], 1)
}

// promptPython is the Python declaration block of the tools' Python prompt section.
func promptPython(t *testing.T, tools []api.Schema) string {
	t.Helper()
	sec, err := sdkgen.PythonSDKSection(api.ModePTC, tools)
	require.NoError(t, err)
	_, block, found := strings.Cut(sec, "```python\n")
	require.True(t, found, sec)
	block, _, found = strings.Cut(block, "```\n")
	require.True(t, found, sec)
	return block
}

// largeToolSet is n tools, enough for the deferred listing (sdkgen.Deferred).
func largeToolSet(n int) []api.Schema {
	out := make([]api.Schema, n)
	for i := range out {
		out[i] = api.Schema{Name: fmt.Sprintf("tool-%d", i), Description: "Does thing number " + strconv.Itoa(i) + "."}
	}
	out[0].Name = "fs_read"
	return out
}
