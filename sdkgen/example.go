package sdkgen

import (
	"encoding/json"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// RouteExample returns a one-line example of calling t the right way, from a run_code program:
//
//	run_code {"code": "return await tools.write({path: \"...\", content: \"...\"});", "description": "..."}
//
// The arguments hold the schema's required properties with placeholder values of the right type
// ("..." for strings, 0 for numbers, the first member of an enum). The executor puts it in the
// UNKNOWN_TOOL message of a collapsed call, because a model refused without an example tends to
// repeat the mistake. A schema it cannot read gives `{}` as the arguments.
func RouteExample(t api.Schema) string {
	var args string
	if schema, err := parseSchema(t.InputSchema, true); err == nil {
		args = placeholder(schema, schema, 0)
	}
	if !strings.HasPrefix(args, "{") {
		args = "{}"
	}
	code := "return await " + toolAccess(t.Name) + "(" + args + ");"
	return runCodeCall(code, "...")
}

// runCodeCall renders a run_code call as its name and its JSON arguments.
func runCodeCall(code, description string) string {
	return `run_code {"code": ` + quote(code) + `, "description": ` + quote(description) + `}`
}

// toolAccess is how a program names a tool: `tools.write` or `tools["my.tool"]`.
func toolAccess(name string) string {
	if isIdentifier(name) {
		return "tools." + name
	}
	return "tools[" + quote(name) + "]"
}

// maxPlaceholderDepth bounds how far placeholders follow nested objects and $refs.
const maxPlaceholderDepth = 4

// placeholder renders a JavaScript value that has the type schema describes, as far as a short
// example can: objects get their required properties, everything else a neutral value.
func placeholder(root, schema any, depth int) string {
	o, ok := schema.(*object)
	if !ok || depth > maxPlaceholderDepth {
		return `"..."`
	}
	if ref, isStr := o.vals["$ref"].(string); isStr {
		if ptr, isLocal := strings.CutPrefix(ref, "#"); isLocal {
			if target, found := resolvePointer(root, ptr); found {
				return placeholder(root, target, depth+1)
			}
		}
	}
	if v, has := o.get("const"); has {
		return jsLiteral(v)
	}
	if values, isArr := o.vals["enum"].([]any); isArr && len(values) > 0 {
		return jsLiteral(values[0])
	}
	types, _ := typeNames(o)
	if len(types) == 0 && hasAny(o, objectKeywords) {
		types = []string{"object"}
	}
	for _, t := range types {
		switch t {
		case "string":
			return `"..."`
		case "number", "integer":
			return "0"
		case "boolean":
			return "false"
		case "array":
			return "[]"
		case "object":
			return objectPlaceholder(root, o, depth)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if branches, isArr := o.vals[k].([]any); isArr && len(branches) > 0 {
			return placeholder(root, branches[0], depth+1)
		}
	}
	if len(types) > 0 && types[0] == "null" {
		return "null"
	}
	return `"..."`
}

// objectPlaceholder renders `{a: ..., b: ...}` with the required properties, in the order the
// declarations list them.
func objectPlaceholder(root any, o *object, depth int) string {
	props, _ := o.vals["properties"].(*object)
	var parts []string
	isRequired := map[string]bool{}
	for _, k := range requiredNames(o) {
		isRequired[k] = true
	}
	if props != nil {
		for _, k := range props.keys {
			if isRequired[k] {
				parts = append(parts, propertyKey(k)+": "+placeholder(root, props.vals[k], depth+1))
				delete(isRequired, k)
			}
		}
	}
	for _, k := range requiredNames(o) {
		if isRequired[k] {
			parts = append(parts, propertyKey(k)+`: "..."`)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// jsLiteral renders a decoded JSON value as a JavaScript expression.
func jsLiteral(v any) string {
	switch x := v.(type) {
	case *object:
		parts := make([]string, len(x.keys))
		for i, k := range x.keys {
			parts[i] = propertyKey(k) + ": " + jsLiteral(x.vals[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = jsLiteral(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case json.Number:
		if _, err := x.Float64(); err == nil {
			return x.String()
		}
		return "0"
	}
	if js := compactJSON(v); js != "" {
		return js
	}
	return "null"
}

// bashCommands are the example's two independent commands, run together with Promise.all.
var bashCommands = [2]string{"git status --short", "git log --oneline -5"}

// bashExample returns the complete example run_code call for the SDK section, or "" when there
// is no `bash` tool or its input schema does not visibly accept `{command: "<string>"}` for both
// example commands (it must declare `command`, and use only keywords the small validator in
// accepts evaluates).
func bashExample(tools []api.Schema) string {
	var bash *api.Schema
	for i := range tools {
		if tools[i].Name == "bash" {
			bash = &tools[i]
			break
		}
	}
	if bash == nil {
		return ""
	}
	schema, err := parseSchema(bash.InputSchema, true)
	if err != nil {
		return ""
	}
	o, isObj := schema.(*object)
	if !isObj {
		return ""
	}
	if props, _ := o.vals["properties"].(*object); props == nil || !props.has("command") {
		return ""
	}
	for _, cmd := range bashCommands {
		args := &object{keys: []string{"command"}, vals: map[string]any{"command": cmd}}
		if ok, known := accepts(schema, args); !ok || !known {
			return ""
		}
	}
	code := "const [status, log] = await Promise.all([\n" +
		"  tools.bash({command: " + quote(bashCommands[0]) + "}),\n" +
		"  tools.bash({command: " + quote(bashCommands[1]) + "}),\n" +
		"]);\n" +
		"return {status, log};"
	return runCodeCall(code, "Show uncommitted changes and the last five commits")
}
