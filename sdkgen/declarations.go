package sdkgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ptcx/ptcx/api"
)

// preamble opens every block: JSON, and the globals a program gets besides tools.
const preamble = `// Tools without an output schema return JsonValue.
type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
declare const console: { log(...data: unknown[]): void; info(...data: unknown[]): void; warn(...data: unknown[]): void; error(...data: unknown[]): void; debug(...data: unknown[]): void };
declare function setTimeout(callback: () => void, ms?: number): number;
declare function clearTimeout(id?: number): void;
`

// toolCallError declares the error a failed call rejects with.
const toolCallError = `/** What a failed tool call throws; message says why it failed. */
declare class ToolCallError extends Error {
  readonly name: "ToolCallError";
  /** The tool whose call failed. */
  readonly toolName: ToolName;
  /** Why it failed, to branch on: BUSY means too many calls pending at once (await some first). */
  readonly code: "DENIED" | "TOOL_TIMEOUT" | "TOOL_FAILED" | "INVALID_ARGS" | "INVALID_TOOL_OUTPUT" | "UNKNOWN_TOOL" | "UNSUPPORTED_SCHEMA" | "ABORTED" | "ABORTED_BEFORE_DISPATCH" | "BUSY" | "INTERNAL";
}
`

// handleDecl declares what a tool that returns handles gives (declared
// only when one does: docs/security.md, "Handles").
const handleDecl = `/** A result the host holds for the program: pass it as (or anywhere inside) a tool's arguments and the tool gets its value; read it with text() or json(), after which the program's later calls carry its labels. */
interface Handle<T = JsonValue> {
  /** The value's size in bytes (its JSON). */
  readonly size: number;
  readonly labels: { integrity: "trusted" | "untrusted"; confidentiality: "public" | "private" | "secret" };
  /** The tool whose result it is. */
  readonly tool: ToolName;
  /** The value as text: a string as it is, anything else as its JSON. */
  text(): Promise<string>;
  json(): Promise<T>;
}
`

// callAny declares tools.$call, which calls any bound tool by its name (a
// tool named "then" only so: as a property it would make tools a
// thenable).
const callAny = "  /** Calls the bound tool named name, as tools[name](args) does. */\n" +
	"  $call(name: ToolName, args?: { [key: string]: JsonValue }): Promise<unknown>;\n"

// Declarations renders the TypeScript block that declares JsonValue, the argument and output
// types of every tool but the transport (run_code, which a program cannot call), ToolName, ToolCallError and `tools` (plus console, setTimeout and
// clearTimeout, which a program also gets). Tools are sorted by name, and the same tools always
// give byte-identical text.
//
// It fails only on what it cannot represent: an empty tool name, a name that is not valid UTF-8,
// two tools with the same name, or a schema that is not JSON or not a JSON Schema (an object or a
// boolean). Within a schema, whatever TypeScript cannot express renders as
// `unknown /* reason */`.
func Declarations(tools []api.Schema) (string, error) {
	decls, _, err := compile(tools)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(preamble)
	for _, td := range decls {
		b.WriteByte('\n')
		writeTypes(&b, td)
	}
	b.WriteByte('\n')
	names := make([]string, len(decls))
	for i, td := range decls {
		names[i] = quote(td.tool.Name)
	}
	if len(names) == 0 {
		b.WriteString("type ToolName = never;\n")
	} else {
		b.WriteString("type ToolName = " + strings.Join(names, " | ") + ";\n")
	}
	b.WriteString(toolCallError)
	for _, td := range decls {
		if td.tool.Handle {
			b.WriteString(handleDecl)
			break
		}
	}
	b.WriteString("declare const tools: {\n")
	for _, td := range decls {
		if td.tool.Name == "then" { // not a property: tools would be a thenable
			writeMember(&b, td, "", 1)
			continue
		}
		writeMember(&b, td, propertyKey(td.tool.Name), 1)
	}
	for _, ns := range namespaceTree(decls) {
		writeNamespace(&b, ns, ns.path, 1)
	}
	b.WriteString(callAny)
	b.WriteString("};\n")
	return b.String(), nil
}

// writeTypes writes the type declarations of one tool: its arguments' and its output's.
func writeTypes(b *strings.Builder, td *toolDecl) {
	for _, doc := range []*document{td.args, td.output} {
		if doc == nil {
			continue
		}
		for _, nt := range doc.order {
			if c := docComment(docOf(nt.schema)); c != "" {
				b.WriteString(c + "\n")
			}
			b.WriteString("type " + nt.name + " = " + nt.body.text + ";\n")
		}
	}
}

// writeMember writes the tool's doc comment and its signature as the member key of a type
// literal at indentation level indent; an empty key is the tool named "then", declared as an
// overload of $call.
func writeMember(b *strings.Builder, td *toolDecl, key string, indent int) {
	pad := indentation(indent)
	if c := docComment(td.tool.Description); c != "" {
		b.WriteString(pad + c + "\n")
	}
	param := "args: "
	if td.argsOptional {
		param = "args?: "
	}
	result := exprJSON.text
	if td.output != nil {
		result = td.output.types[""].name
	}
	if td.tool.Handle {
		result = "Handle<" + result + ">"
	}
	if key == "" {
		fmt.Fprintf(b, "%s$call(name: \"then\", %s%s): Promise<%s>;\n", pad, param, td.args.types[""].name, result)
		return
	}
	fmt.Fprintf(b, "%s%s(%s%s): Promise<%s>;\n", pad, key, param, td.args.types[""].name, result)
}

// toolDecl is one tool compiled for rendering.
type toolDecl struct {
	tool         api.Schema
	args         *document
	output       *document // nil: the tool returns JsonValue
	argsOptional bool
}

// compile checks the tools, sorts them, names their types and renders their schemas. Root type
// names are handed out for every tool before any definition's, so a definition can never take a
// name the next tool's `XArgs` would have had.
func compile(tools []api.Schema) ([]*toolDecl, *nameTable, error) {
	sorted, inputs, outputs, err := prepare(tools)
	if err != nil {
		return nil, nil, err
	}
	decls := make([]*toolDecl, len(sorted))
	for i, t := range sorted {
		decls[i] = &toolDecl{tool: t, argsOptional: argsOptional(inputs[i])}
	}

	names := newNameTable(reservedNames())
	prefixes := newNameTable(nil)
	for i, td := range decls {
		prefix := prefixes.alloc(typePrefix(td.tool.Name))
		td.args = newDocument(names, prefix, names.alloc(prefix+"Args"), inputs[i])
		if outputs[i] != nil {
			td.output = newDocument(names, prefix, names.alloc(prefix+"Output"), outputs[i])
		}
	}
	for _, td := range decls {
		td.args.render()
		if td.output != nil {
			td.output.render()
		}
	}
	return decls, names, nil
}

// prepare checks the tools and sorts them by name, leaving out the transport, and decodes their
// input and output schemas (an absent output schema is nil). Both languages' renderers start here.
func prepare(tools []api.Schema) (sorted []api.Schema, inputs, outputs []any, err error) {
	sorted = make([]api.Schema, 0, len(tools))
	for _, t := range tools {
		if !t.Transport { // run_code: a program cannot call it
			sorted = append(sorted, t)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	inputs = make([]any, len(sorted))
	outputs = make([]any, len(sorted))
	for i, t := range sorted {
		switch {
		case t.Name == "":
			return nil, nil, nil, errors.New("sdkgen: a tool has an empty name")
		case !utf8.ValidString(t.Name):
			return nil, nil, nil, fmt.Errorf("sdkgen: tool name %q is not valid UTF-8", t.Name)
		case i > 0 && sorted[i-1].Name == t.Name:
			return nil, nil, nil, fmt.Errorf("sdkgen: two tools are named %q", t.Name)
		}
		if inputs[i], err = parseSchema(t.InputSchema, true); err != nil {
			return nil, nil, nil, fmt.Errorf("sdkgen: tool %q: input schema: %w", t.Name, err)
		}
		if outputs[i], err = parseSchema(t.OutputSchema, false); err != nil {
			return nil, nil, nil, fmt.Errorf("sdkgen: tool %q: output schema: %w", t.Name, err)
		}
	}
	return sorted, inputs, outputs, nil
}

// parseSchema decodes one schema. An absent schema is nil for outputs and "any object" for inputs.
func parseSchema(raw json.RawMessage, input bool) (any, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		if input {
			return &object{keys: []string{"type"}, vals: map[string]any{"type": "object"}}, nil
		}
		return nil, nil
	}
	v, err := parseJSON(raw)
	if err != nil {
		return nil, err
	}
	switch v.(type) {
	case *object, bool:
		return v, nil
	}
	return nil, errors.New("not a JSON Schema (an object or a boolean)")
}

// argsOptional reports whether a program may call the tool with no argument: the input schema is
// a plain object schema (or `true`) with nothing required.
func argsOptional(schema any) bool {
	o, ok := schema.(*object)
	if !ok {
		return schema == true
	}
	for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if", "const", "enum", "minProperties", "dependentRequired"} {
		if o.has(k) {
			return false
		}
	}
	if types, have := typeNames(o); have && (len(types) != 1 || types[0] != "object") {
		return false
	}
	return len(requiredNames(o)) == 0
}
