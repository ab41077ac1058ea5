package sdkgen

import (
	"strings"

	"github.com/ptcx/ptcx/api"
)

// pyHeader opens every Python stub.
const pyHeader = `# The tools a ptcx run_code program in Python can call, as a type stub (ptcx sdk --language python).
# In the sandbox, tools and ToolCallError are globals and the top level may await. To check a program
# with a type checker (pyright), save this as ptcx_sdk.pyi and import from it, or as __builtins__.pyi
# beside the program. Call a tool with keyword arguments, await tools.read(path="a.txt"), or with one
# dict, await tools.read({"path": "a.txt"}); a name that is not a Python identifier with brackets,
# await tools["odd-name"](...); a dotted name a.b as tools.a.b.
`

// pyPreamble declares JSON values and the untyped call of a tool by its name.
const pyPreamble = `
# Tools without an output schema return JsonValue.
type JsonValue = str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]

class AnyTool(Protocol):
    # A tool reached as tools[name] whose arguments are not typed here.
    async def __call__(self, args: dict[str, JsonValue] = ..., /, **kwargs: JsonValue) -> Any: ...
`

// pyToolCallError declares the exception a failed call raises, with the codes toolCallError has.
const pyToolCallError = `
class ToolCallError(Exception):
    # What a failed tool call raises; str(error) says why it failed.
    # The tool whose call failed.
    tool: ToolName
    # Why it failed, to branch on: BUSY means too many calls pending at once (await some first).
    code: Literal["DENIED", "TOOL_TIMEOUT", "TOOL_FAILED", "INVALID_ARGS", "INVALID_TOOL_OUTPUT", "UNKNOWN_TOOL", "UNSUPPORTED_SCHEMA", "ABORTED", "ABORTED_BEFORE_DISPATCH", "BUSY", "INTERNAL"]
`

// pyHandle declares what a tool that returns handles gives (only when one does).
const pyHandle = `
class HandleLabels(TypedDict):
    integrity: Literal["trusted", "untrusted"]
    confidentiality: Literal["public", "private", "secret"]

class Handle[T = JsonValue]:
    # A result the host holds for the program: pass it as (or anywhere inside) a tool's arguments and
    # the tool gets its value; read it with text() or json(), after which the program's later calls
    # carry its labels.
    # The value's size in bytes (its JSON).
    size: int
    labels: HandleLabels
    # The tool whose result it is.
    tool: ToolName
    # The value as text: a string as it is, anything else as its JSON.
    async def text(self) -> str: ...
    async def json(self) -> T: ...
`

// pyOwnNames are the names the stub itself declares or imports; generated names avoid them.
var pyOwnNames = []string{"Any", "Literal", "Never", "NotRequired", "Protocol", "TypedDict", "overload",
	"JsonValue", "AnyTool", "ToolName", "ToolCallError", "Handle", "HandleLabels", "Tools", "Exception",
	"T", "True", "False", "None"}

// pyImports are the names imported from typing, each only when the stub uses it.
var pyImports = []string{"Any", "Literal", "Never", "NotRequired", "Protocol", "TypedDict", "overload"}

// isWordByte reports whether c is part of an ASCII word (an identifier's byte).
func isWordByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// pyTool is one tool compiled for the Python stub.
type pyTool struct {
	tool         api.Schema
	args         *pyDocument
	output       *pyDocument // nil: the tool returns JsonValue
	argsOptional bool
	callable     string // the name of its callable Protocol when it is reached only as tools[name]
}

// PythonStub renders the Python type stub of the tools a program can call (all but the
// transport): a TypedDict for each tool's arguments and for each object its schemas describe, a
// result type from its output schema (JsonValue when it has none), ToolName, ToolCallError, Handle
// when a tool returns handles, and a Tools Protocol whose async methods take the arguments as
// keyword arguments or as one dict, with `tools: Tools`. A name that is not a Python identifier
// (or is a keyword) is reached through Tools.__getitem__ with its Literal name; a dotted name whose
// segments are identifiers, as in TypeScript (namespaceTree), through nested Protocols. Tools are
// sorted by name, and the same tools always give byte-identical text.
//
// It fails where Declarations fails (an empty, invalid or duplicated name; a schema that is not a
// JSON Schema). Within a schema, what Python's types cannot express is `Any` with a comment saying
// why; an intersection (allOf) keeps its first part, which admits more than the schema.
func PythonStub(tools []api.Schema) (string, error) {
	decls, err := pythonDeclarations(tools)
	if err != nil {
		return "", err
	}
	return pyHeader + decls, nil
}

// pythonDeclarations is PythonStub without its header (how to save and check the stub): from the
// typing import on, valid Python by itself. The Python prompt carries it (PythonSDKSection).
func pythonDeclarations(tools []api.Schema) (string, error) {
	sorted, inputs, outputs, err := prepare(tools)
	if err != nil {
		return "", err
	}
	names := newNameTable(pyOwnNames)
	prefixes := newNameTable(nil)
	pts := make([]*pyTool, len(sorted))
	for i, t := range sorted {
		prefix := prefixes.alloc(typePrefix(t.Name))
		pt := &pyTool{tool: t, argsOptional: argsOptional(inputs[i])}
		pt.args = newPyDocument(names, prefix, names.alloc(prefix+"Args"), inputs[i])
		if outputs[i] != nil {
			pt.output = newPyDocument(names, prefix, names.alloc(prefix+"Output"), outputs[i])
		}
		pts[i] = pt
	}
	for _, pt := range pts {
		pt.args.render()
		if pt.output != nil {
			pt.output.render()
		}
	}

	// Where each tool is reached: a method of Tools, a namespace's method, or tools[name].
	decls := make([]*toolDecl, len(pts))
	byName := make(map[string]*pyTool, len(pts))
	for i, pt := range pts {
		decls[i] = &toolDecl{tool: pt.tool}
		byName[pt.tool.Name] = pt
	}
	namespaces := namespaceTreeOf(decls, pyName)
	inNamespace := map[string]bool{}
	var nsClasses []pyNamespace
	var collect func(n *nsNode) string
	collect = func(n *nsNode) string {
		cls := pyNamespace{node: n, name: names.alloc(typePrefix(n.path) + "Tools")}
		idx := len(nsClasses)
		nsClasses = append(nsClasses, cls)
		for _, k := range n.keys {
			if td, ok := n.tools[k]; ok {
				inNamespace[td.tool.Name] = true
			} else {
				nsClasses[idx].children = append(nsClasses[idx].children, collect(n.children[k]))
			}
		}
		return cls.name
	}
	var top []string
	for _, n := range namespaces {
		top = append(top, collect(n))
	}
	var bracketed []*pyTool
	for _, pt := range pts {
		if !pyName(pt.tool.Name) && !inNamespace[pt.tool.Name] {
			pt.callable = names.alloc(typePrefix(pt.tool.Name) + "Tool")
			bracketed = append(bracketed, pt)
		}
	}

	var b strings.Builder
	b.WriteString(pyPreamble)
	for _, pt := range pts {
		b.WriteByte('\n')
		writePyTypes(&b, pt.args)
		if pt.output != nil {
			writePyTypes(&b, pt.output)
		}
	}
	b.WriteByte('\n')
	if len(pts) == 0 {
		b.WriteString("type ToolName = Never\n")
	} else {
		lits := make([]string, len(pts))
		for i, pt := range pts {
			lits[i] = pyQuote(pt.tool.Name)
		}
		b.WriteString("type ToolName = Literal[" + strings.Join(lits, ", ") + "]\n")
	}
	b.WriteString(pyToolCallError)
	for _, pt := range pts {
		if pt.tool.Handle {
			b.WriteString(pyHandle)
			break
		}
	}
	for _, pt := range bracketed {
		b.WriteString("\nclass " + pt.callable + "(Protocol):\n")
		writePyMethod(&b, pt, "__call__")
	}
	for _, ns := range nsClasses {
		b.WriteString("\nclass " + ns.name + "(Protocol):\n")
		child := 0
		for _, k := range ns.node.keys {
			if td, ok := ns.node.tools[k]; ok {
				writePyMethod(&b, byName[td.tool.Name], k)
				continue
			}
			b.WriteString("    " + k + ": " + ns.children[child] + "\n")
			child++
		}
	}
	b.WriteString("\nclass Tools(Protocol):\n")
	for i, n := range namespaces {
		b.WriteString("    " + n.path + ": " + top[i] + "\n")
	}
	for _, pt := range pts {
		if pyName(pt.tool.Name) {
			writePyMethod(&b, pt, pt.tool.Name)
		}
	}
	writeGetItem(&b, pts, bracketed)
	b.WriteString("\ntools: Tools\n")

	body := b.String()
	seen := map[string]bool{}
	for i := 0; i < len(body); {
		j := i
		for j < len(body) && isWordByte(body[j]) {
			j++
		}
		if j > i {
			seen[body[i:j]] = true
			i = j
		} else {
			i++
		}
	}
	var used []string
	for _, name := range pyImports {
		if seen[name] {
			used = append(used, name)
		}
	}
	return "from typing import " + strings.Join(used, ", ") + "\n" + body, nil
}

// pyNamespace is the Protocol of one namespace of dotted names.
type pyNamespace struct {
	node     *nsNode
	name     string
	children []string // the class names of its nested namespaces, in the order of node.keys
}

// writePyTypes writes a document's named types: TypedDicts and aliases.
func writePyTypes(b *strings.Builder, d *pyDocument) {
	for _, nt := range d.order {
		if nt.class == nil && nt.alias.text == "" {
			continue
		}
		if c := pyComment(docOf(nt.schema)); c != "" {
			b.WriteString(c + "\n")
		}
		if nt.class != nil {
			writePyClass(b, nt.name, nt.class)
			continue
		}
		b.WriteString("type " + nt.name + " = " + nt.alias.text + notesComment(nt.alias.notes) + "\n")
	}
}

// notesComment is the trailing comment that says what a type could not express.
func notesComment(notes []string) string {
	notes = distinct(notes)
	if len(notes) == 0 {
		return ""
	}
	return "  " + pyComment(strings.Join(notes, "; "))
}

// writePyClass writes a TypedDict: as a class when every key is a field name, else in the
// functional form, whose keys are strings. Keys not listed are typed by extra_items, or refused
// (closed=True).
func writePyClass(b *strings.Builder, name string, c *pyClass) {
	classSyntax := true
	for _, f := range c.fields {
		classSyntax = classSyntax && pyName(f.key)
	}
	option := "closed=True"
	if c.extra != nil {
		option = "extra_items=" + c.extra.text
	}
	fieldType := func(f pyField) string {
		if f.required {
			return f.t.text
		}
		return "NotRequired[" + f.t.text + "]"
	}
	var extraNotes string
	if c.extra != nil {
		extraNotes = notesComment(c.extra.notes)
	}
	if classSyntax {
		b.WriteString("class " + name + "(TypedDict, " + option + "):" + extraNotes + "\n")
		for _, f := range c.fields {
			if doc := pyComment(f.doc); doc != "" {
				b.WriteString("    " + doc + "\n")
			}
			b.WriteString("    " + f.key + ": " + fieldType(f) + notesComment(f.t.notes) + "\n")
		}
		return
	}
	b.WriteString(name + " = TypedDict(" + pyQuote(name) + ", {" + extraNotes + "\n")
	for _, f := range c.fields {
		if doc := pyComment(f.doc); doc != "" {
			b.WriteString("    " + doc + "\n")
		}
		b.WriteString("    " + pyQuote(f.key) + ": " + fieldType(f) + "," + notesComment(f.t.notes) + "\n")
	}
	b.WriteString("}, " + option + ")\n")
}

// writePyMethod writes a tool's signatures as the method key of a Protocol: one taking the
// arguments as one dict and, when every required key is a keyword name, one taking them as
// keyword arguments (keys that are not keyword names go only in the dict).
func writePyMethod(b *strings.Builder, pt *pyTool, key string) {
	const pad = "    "
	if c := pyComment(pt.tool.Description); c != "" {
		b.WriteString(pad + c + "\n")
	}
	result := pyJSON.text
	if pt.output != nil {
		result = pt.output.refs[""].name
	}
	if pt.tool.Handle {
		result = "Handle[" + result + "]"
	}
	root := pt.args.refs[""]
	dictParam := "args: " + root.name
	if pt.argsOptional {
		dictParam += " = ..."
	}
	keywords, ok := keywordParams(root)
	if !ok {
		b.WriteString(pad + "async def " + key + "(self, " + dictParam + ", /) -> " + result + ": ...\n")
		return
	}
	b.WriteString(pad + "@overload\n")
	b.WriteString(pad + "async def " + key + "(self, " + dictParam + ", /) -> " + result + ": ...\n")
	b.WriteString(pad + "@overload\n")
	params := "self"
	if len(keywords) > 0 {
		params += ", "
		if !strings.HasPrefix(keywords[0], "**") {
			params += "*, "
		}
		params += strings.Join(keywords, ", ")
	}
	line := pad + "async def " + key + "(" + params + ") -> " + result + ": ..."
	if len(line) > maxPyLine && len(keywords) > 1 {
		var w strings.Builder
		w.WriteString(pad + "async def " + key + "(\n" + pad + pad + "self,\n")
		if !strings.HasPrefix(keywords[0], "**") {
			w.WriteString(pad + pad + "*,\n")
		}
		for _, k := range keywords {
			w.WriteString(pad + pad + k + ",\n")
		}
		w.WriteString(pad + ") -> " + result + ": ...")
		line = w.String()
	}
	b.WriteString(line + "\n")
}

// maxPyLine is the length past which a keyword signature takes one line per parameter.
const maxPyLine = 110

// keywordParams returns the keyword parameters of the arguments' root type, or ok=false when they
// cannot be keyword arguments (not an object, or a required key that is not a parameter name).
func keywordParams(root *pyNamed) (params []string, ok bool) {
	if root.class == nil {
		inner, isMap := strings.CutPrefix(root.alias.text, "dict[str, ")
		if !isMap || root.alias.parts != nil || !strings.HasSuffix(inner, "]") {
			return nil, false
		}
		return []string{"**kwargs: " + inner[:len(inner)-1]}, true
	}
	taken := map[string]bool{"self": true}
	for _, f := range root.class.fields {
		if !pyName(f.key) || f.key == "self" {
			if f.required {
				return nil, false
			}
			continue
		}
		taken[f.key] = true
		p := f.key + ": " + f.t.text
		if !f.required {
			p += " = ..."
		}
		params = append(params, p)
	}
	if root.class.extra != nil {
		name := "kwargs"
		for taken[name] {
			name += "_"
		}
		params = append(params, "**"+name+": "+root.class.extra.text)
	}
	return params, true
}

// writeGetItem writes Tools.__getitem__: tools[name] for a name reached only so is typed as its
// tool; any other tool by its name is an AnyTool (its arguments unchecked here, as typed above).
func writeGetItem(b *strings.Builder, pts, bracketed []*pyTool) {
	var rest []string
	for _, pt := range pts {
		if pt.callable == "" {
			rest = append(rest, pyQuote(pt.tool.Name))
		}
	}
	overloaded := len(bracketed)+min(len(rest), 1) > 1
	b.WriteString("    # Any tool by its name, tools[name](...).\n")
	for _, pt := range bracketed {
		if overloaded {
			b.WriteString("    @overload\n")
		}
		b.WriteString("    def __getitem__(self, name: Literal[" + pyQuote(pt.tool.Name) + "]) -> " + pt.callable + ": ...\n")
	}
	switch {
	case len(rest) == 0 && len(bracketed) == 0:
		b.WriteString("    def __getitem__(self, name: Never) -> AnyTool: ...\n")
	case len(rest) > 0:
		if overloaded {
			b.WriteString("    @overload\n")
		}
		b.WriteString("    def __getitem__(self, name: Literal[" + strings.Join(rest, ", ") + "]) -> AnyTool: ...\n")
	}
}
