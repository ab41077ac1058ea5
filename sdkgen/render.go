package sdkgen

import (
	"encoding/json"
	"strings"
)

// maxDepth bounds how deeply one type expression nests (named types start again at zero). Deeper
// schemas render `unknown /* schema nested too deeply */` rather than a type no one can read.
const maxDepth = 32

// ctx is where a type expression is being rendered.
type ctx struct {
	indent int // indentation level of the line the expression starts on
	depth  int // nesting depth within the current named type
	// direct is true where a reference to a named type is not deferred by TypeScript: the whole
	// alias, or a member of a union or intersection at that level. Object properties, index
	// signatures, array and tuple elements are deferred, so recursion through them is fine.
	direct bool
}

// same is a context for a sub-expression on the same level: a union or intersection member.
func (c ctx) same() ctx { return ctx{indent: c.indent, depth: c.depth + 1, direct: c.direct} }

// deferred is a context for an element, property or index type one indentation level in.
func (c ctx) deferred(indent int) ctx { return ctx{indent: indent, depth: c.depth + 1} }

// document is one schema (a tool's input or output schema) being rendered, with the named types
// its local $refs give rise to. The root itself is a named type (`WriteArgs`), so `$ref: "#"`
// works like any other reference.
type document struct {
	names   *nameTable
	prefix  string
	root    any
	types   map[string]*namedType // by decoded JSON pointer; "" is the root
	order   []*namedType          // in order of discovery
	pending []*namedType
	cur     *namedType
}

// namedType is a `type Name = ...;` declaration.
type namedType struct {
	name   string
	schema any
	body   expr
	edges  []*namedType        // references found in direct positions of body
	broken map[*namedType]bool // direct references rendered as unknown to break a cycle
}

func newDocument(names *nameTable, prefix, rootName string, root any) *document {
	d := &document{names: names, prefix: prefix, root: root, types: map[string]*namedType{}}
	nt := &namedType{name: rootName, schema: root, broken: map[*namedType]bool{}}
	d.types[""] = nt
	d.order = append(d.order, nt)
	d.pending = append(d.pending, nt)
	return d
}

// render renders the root and every named type reachable from it, then breaks the cycles that
// TypeScript would reject.
func (d *document) render() {
	for len(d.pending) > 0 {
		nt := d.pending[0]
		d.pending = d.pending[1:]
		d.renderNamed(nt)
	}
	d.breakCycles()
}

func (d *document) renderNamed(nt *namedType) {
	d.cur = nt
	nt.edges = nil
	nt.body = d.typeOf(nt.schema, ctx{direct: true})
	d.cur = nil
}

// typeOf renders schema s. The keywords of one schema all apply at once, so what they render is
// intersected: `$ref`, the type (`const`, `enum` or `type`), `allOf` members, and one union for
// each of `anyOf` and `oneOf`.
func (d *document) typeOf(s any, c ctx) expr {
	o, isObj := s.(*object)
	if !isObj {
		if b, isBool := s.(bool); isBool {
			if b {
				return exprJSON
			}
			return exprNever
		}
		return unknownExpr("not a schema")
	}
	if c.depth > maxDepth {
		return unknownExpr("schema nested too deeply")
	}
	var parts []expr
	if ref, ok := o.get("$ref"); ok {
		if s, isStr := ref.(string); isStr {
			parts = append(parts, d.ref(s, c))
		} else {
			parts = append(parts, unknownExpr("$ref is not a string"))
		}
	}
	for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
		if o.has(k) {
			parts = append(parts, unknownExpr(k+" is not supported"))
		}
	}
	if core, ok := d.core(o, c); ok {
		parts = append(parts, core)
	}
	if all, ok := o.vals["allOf"].([]any); ok {
		for _, b := range all {
			parts = append(parts, d.typeOf(b, c.same()))
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := o.vals[k].([]any); ok && len(branches) > 0 {
			members := make([]expr, len(branches))
			for i, b := range branches {
				members[i] = d.typeOf(b, c.same())
			}
			parts = append(parts, union(members...))
		}
	}
	// OpenAPI's `nullable` is deliberately not read: the registry validates
	// JSON Schema 2020-12, which has no such keyword, so null is refused at
	// run time and the type must not promise it. Use "type": [..., "null"].
	return intersection(parts...)
}

// core renders what the schema says about its own type: `const`, else `enum`, else `type` (or
// the type its keywords imply). ok is false when it says nothing.
func (d *document) core(o *object, c ctx) (e expr, ok bool) {
	types, haveTypes := typeNames(o)
	if v, isConst := o.get("const"); isConst {
		if haveTypes && !kindAllowed(jsonKind(v), types) {
			return exprNever, true
		}
		return literal(v), true
	}
	if ev, isEnum := o.get("enum"); isEnum {
		values, isArr := ev.([]any)
		if !isArr {
			return unknownExpr("enum is not an array"), true
		}
		return enumType(values, types, haveTypes), true
	}
	if !haveTypes {
		if hasAny(o, objectKeywords) {
			types = append(types, "object")
		}
		if hasAny(o, arrayKeywords) {
			types = append(types, "array")
		}
		if len(types) == 0 {
			return expr{}, false
		}
	}
	members := make([]expr, 0, len(types))
	for _, t := range types {
		switch t {
		case "string":
			members = append(members, exprString)
		case "number", "integer":
			members = append(members, exprNumber)
		case "boolean":
			members = append(members, exprBoolean)
		case "null":
			members = append(members, exprNull)
		case "object":
			members = append(members, d.objectType(o, c))
		case "array":
			members = append(members, d.arrayType(o, c))
		case "any":
			members = append(members, exprJSON)
		default:
			members = append(members, unknownExpr("unsupported type "+quote(t)))
		}
	}
	return union(members...), true
}

// docOf is the one-line documentation of a schema: its description, and its default when that is
// short.
func docOf(s any) string {
	o, ok := s.(*object)
	if !ok {
		return ""
	}
	doc := o.str("description")
	if def, has := o.get("default"); has {
		if js := compactJSON(def); js != "" && len(js) <= 40 {
			if doc != "" {
				doc += " "
			}
			doc += "Default: " + js + "."
		}
	}
	return doc
}

// compactJSON encodes a decoded value as compact JSON, or "" when it cannot.
func compactJSON(v any) string {
	var b strings.Builder
	if !writeJSON(&b, v, 0) {
		return ""
	}
	return b.String()
}

func writeJSON(b *strings.Builder, v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool, json.Number:
		js, _ := json.Marshal(x)
		b.Write(js)
	case string:
		b.WriteString(quote(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if !writeJSON(b, e, depth+1) {
				return false
			}
		}
		b.WriteByte(']')
	case *object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quote(k))
			b.WriteByte(':')
			if !writeJSON(b, x.vals[k], depth+1) {
				return false
			}
		}
		b.WriteByte('}')
	default:
		return false
	}
	return true
}

func indentation(level int) string { return strings.Repeat("  ", level) }
