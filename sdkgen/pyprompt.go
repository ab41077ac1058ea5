package sdkgen

import (
	"strings"

	"github.com/ptcx/ptcx/api"
)

// pySDKRules is how to write a Python program: sdkRules' counterpart, rule for rule, with the
// language argument first (a program without it is TypeScript).
const pySDKRules = "run_code runs a program that calls tools as typed async functions. How to write one:\n" +
	"- Write Python, and always pass `\"language\": \"python\"` beside `code`. `code` is a Python 3.13 module body: " +
	"use `await` anywhere, even at the top level; the value of the last statement, when it is an expression, is the result (as in a REPL; `return` outside a function is a syntax error).\n" +
	"- Nothing is type-checked when it runs, so follow the declarations below: a TypedDict is a plain dict, and results arrive as plain dicts, lists, strings, numbers, booleans and None.\n" +
	bindingsRule +
	"- Call a tool with keyword arguments, `await tools.read(path=\"a.txt\")`, or with one dict, `await tools.read({\"path\": \"a.txt\"})`; " +
	"a name that is not an identifier (a hyphen, a keyword) with brackets: `await tools[\"odd-name\"](...)`.\n" +
	"- Run independent calls together with `asyncio.gather` (`import asyncio`); `await` a call before any call that needs its result.\n" +
	"- Await every call you start: a call never awaited never runs, and one still pending when the program ends is abandoned.\n" +
	"- A failed call raises `ToolCallError` (`str(e)` says why, with `.tool` and `.code`); uncaught, it fails the whole run, so catch it where a failure is expected: " +
	"`except ToolCallError as e:` then `if e.code != \"TOOL_TIMEOUT\": raise` (retry or skip otherwise).\n" +
	"- Only the result and `print` output reach you, within a budget (past it they are cut, not failed): filter and summarise inside the program, and keep both small. " +
	"The result must be plain JSON: dict, list, tuple, str, int, float, bool or None (make a set a list, a datetime a string).\n" +
	"- A program has Python's standard library (json, re, datetime, collections, ...) but no network, no files, no subprocess, threads or sockets: only the tools below.\n"

// pyNamespaceRule explains attribute access to dotted names with one of them.
func pyNamespaceRule(name string) string {
	return "- A dotted tool name is also a path when each part is an identifier: `tools." + name + "(...)` is `tools[" + pyQuote(name) +
		"](...)`, which always works.\n"
}

// pyDeferredRules tells a model how to work with a large tool set from Python: deferredRules'
// counterpart (the catalog's functions are reached with brackets, and answer at once).
const pyDeferredRules = "- This tool set is large, so only names and one-line descriptions are listed below. A program finds the rest itself, " +
	"in the sandbox and at no cost in calls: `tools[\"$search\"](\"what it does\")` returns the best-matching tools (name and description, best first) " +
	"and `tools[\"$describe\"](name)` a tool's declaration (TypeScript's: read an object type as a dict) and JSON Schemas; both return at once (no await). " +
	"When unsure of a tool's arguments, describe it first: `tools[\"$describe\"](\"fs.read_file\")[\"inputSchema\"]`.\n"

// pyDeferredDeclarations declares what a Python program gets on tools when the tool set is large:
// DeferredDeclarations' counterpart.
const pyDeferredDeclarations = `from typing import Any, Literal, Protocol, TypedDict, overload

type JsonValue = str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]

class ToolCallError(Exception):
    # What a failed tool call raises; str(error) says why it failed.
    # The tool whose call failed.
    tool: str
    # Why it failed, to branch on: BUSY means too many calls pending at once (await some first).
    code: Literal["DENIED", "TOOL_TIMEOUT", "TOOL_FAILED", "INVALID_ARGS", "INVALID_TOOL_OUTPUT", "UNKNOWN_TOOL", "UNSUPPORTED_SCHEMA", "ABORTED", "ABORTED_BEFORE_DISPATCH", "BUSY", "INTERNAL"]

class ToolMatch(TypedDict):
    name: str
    description: str

class ToolDescription(TypedDict):
    name: str
    description: str
    declaration: str
    inputSchema: JsonValue
    outputSchema: JsonValue

class Search(Protocol):
    # The bound tools whose names and descriptions best match query, best first: at most limit (at most 50).
    def __call__(self, query: str, limit: int = 10) -> list[ToolMatch]: ...

class Describe(Protocol):
    # One bound tool's declaration and JSON Schemas; AttributeError for a name that is not bound.
    def __call__(self, name: str) -> ToolDescription: ...

class Tools(Protocol):
    @overload
    def __getitem__(self, name: Literal["$search"]) -> Search: ...
    @overload
    def __getitem__(self, name: Literal["$describe"]) -> Describe: ...
    # A bound tool by its name: await it with keyword arguments or one dict, as its declaration says.
    @overload
    def __getitem__(self, name: str) -> Any: ...
    # tools.name for a name that is an identifier, tools.a.b for a dotted one.
    def __getattr__(self, name: str) -> Any: ...

tools: Tools
`

// pyBashExample is bashExample in Python: the same two commands, run together with asyncio.gather.
func pyBashExample(tools []api.Schema) string {
	if bashExample(tools) == "" {
		return ""
	}
	code := "import asyncio\n" +
		"status, log = await asyncio.gather(\n" +
		"    tools.bash(command=" + pyQuote(bashCommands[0]) + "),\n" +
		"    tools.bash(command=" + pyQuote(bashCommands[1]) + "),\n" +
		")\n" +
		"{\"status\": status, \"log\": log}"
	return `run_code {"language": "python", "code": ` + quote(code) + `, "description": ` +
		quote("Show uncommitted changes and the last five commits") + `}`
}

// PythonSDKSection renders the "tools:sdk" section for programs written in Python: SDKSection's
// counterpart, with Python's rules, example and declarations (the typed Python SDK of
// PythonStub, without the stub's header on how to save and check it). A large tool set
// (Deferred) gets the names and one-line descriptions of its tools, with how a Python program
// finds the rest (tools["$search"], tools["$describe"]). It is empty under "native"; its errors
// are SDKSection's.
func PythonSDKSection(mode api.Mode, tools []api.Schema) (string, error) {
	if err := checkMode(mode); err != nil {
		return "", err
	}
	if mode == api.ModeNative {
		return "", nil
	}
	decls, err := pythonDeclarations(tools) // checks the tools, whether or not its text is shown
	if err != nil {
		return "", err
	}
	deferred := Deferred(tools)
	var b strings.Builder
	b.WriteString(pySDKRules)
	if name := firstNamespaced(tools, pyName); name != "" {
		b.WriteString(pyNamespaceRule(name))
	}
	if deferred {
		b.WriteString(pyDeferredRules)
	}
	if ex := pyBashExample(tools); ex != "" {
		b.WriteString("\nA complete run_code call (the tool name, then its JSON arguments):\n" + ex + "\n")
	}
	if deferred {
		b.WriteString("\nDeclarations of what a program gets:\n```python\n" + pyDeferredDeclarations + "```\n" +
			"\nThe bound tools (name: what it does):\n" + listing(tools, `tools["$search"]`))
		return b.String(), nil
	}
	b.WriteString("\nDeclarations of the functions a program can call:\n```python\n" + decls + "```\n")
	return b.String(), nil
}

// describeRunCodePython is DescribeRunCode for a deployment whose prompt is Python's
// (DescribeRunCodeIn).
func describeRunCodePython(scope, base string, bindable []api.Schema) string {
	decls, err := pythonDeclarations(bindable)
	if err != nil {
		return base
	}
	lead := "\n\nPrograms are Python, with \"language\": \"python\" (a module body whose last expression is the result; tools as `await tools.read(path=\"a.txt\")`). "
	if Deferred(bindable) {
		return base + lead + strings.TrimPrefix(pyDeferredRules, "- ") +
			"\nThe bound tools (name: what it does):\n" + listing(bindable, `tools["$search"]`)
	}
	return base + lead + "The program's bindings:\n\n" + decls
}
