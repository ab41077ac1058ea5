package sdkgen

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// maxPyName bounds the base of a generated nested type name (`SearchArgsFilterAll...`): past it the
// base is cut, and the name table's numeric suffix keeps it unique, so deep nesting cannot make
// names (and the text) grow with the square of the depth.
const maxPyName = 64

// pyExpr is a rendered Python type expression. notes are what it could not express (rendered as
// Any), shown in a trailing comment on the line that uses it.
type pyExpr struct {
	text  string
	notes []string
	parts []pyExpr // the members of a union, so that nested unions flatten
}

var (
	pyJSON  = pyExpr{text: "JsonValue"}
	pyNever = pyExpr{text: "Never"}
	pyNone  = pyExpr{text: "None"}
	pyStr   = pyExpr{text: "str"}
	pyInt   = pyExpr{text: "int"}
	pyFloat = pyExpr{text: "float"}
	pyBool  = pyExpr{text: "bool"}
	pyDict  = pyExpr{text: "dict[str, JsonValue]"}
	pyList  = pyExpr{text: "list[JsonValue]"}
)

// pyAny is what Python's types cannot express, with the reason.
func pyAny(reason string) pyExpr { return pyExpr{text: "Any", notes: []string{reason}} }

// pyUnion joins members with `|`: nested unions flatten, duplicates and Never drop out, JsonValue
// absorbs the other JSON members (all but Any), literals merge into one Literal[...], no members
// at all is Never.
func pyUnion(members ...pyExpr) pyExpr {
	var flat []pyExpr
	for _, m := range members {
		if m.parts != nil {
			flat = append(flat, m.parts...)
		} else {
			flat = append(flat, m)
		}
	}
	var notes []string
	absorbed := false
	for _, m := range flat {
		notes = append(notes, m.notes...)
		absorbed = absorbed || m.text == pyJSON.text
	}
	var out []pyExpr
	var lits []string
	litAt := -1
	seen := map[string]bool{}
	for _, m := range flat {
		switch {
		case m.text == pyNever.text || seen[m.text]:
			continue
		case absorbed && m.text != pyJSON.text && m.text != "Any":
			continue
		}
		seen[m.text] = true
		if inner, ok := strings.CutPrefix(m.text, "Literal["); ok && strings.HasSuffix(inner, "]") {
			if litAt < 0 {
				litAt = len(out)
				out = append(out, pyExpr{})
			}
			lits = append(lits, inner[:len(inner)-1])
			continue
		}
		out = append(out, pyExpr{text: m.text})
	}
	if litAt >= 0 {
		out[litAt] = pyExpr{text: "Literal[" + strings.Join(lits, ", ") + "]"}
	}
	switch len(out) {
	case 0:
		return pyExpr{text: pyNever.text, notes: notes}
	case 1:
		return pyExpr{text: out[0].text, notes: notes}
	}
	texts := make([]string, len(out))
	for i, m := range out {
		texts[i] = m.text
	}
	return pyExpr{text: strings.Join(texts, " | "), notes: notes, parts: out}
}

// withNotes returns e with more notes.
func (e pyExpr) withNotes(notes ...string) pyExpr {
	e.notes = append(append([]string(nil), e.notes...), notes...)
	return e
}

// pyCtx is where a type expression is rendered: hint is the base name for a TypedDict it needs,
// direct is true where a reference is not deferred (the alias itself, or a union member at its
// top), as in the TypeScript renderer.
type pyCtx struct {
	hint   string
	depth  int
	direct bool
}

func (c pyCtx) deferred(hint string) pyCtx { return pyCtx{hint: hint, depth: c.depth + 1} }
func (c pyCtx) same(hint string) pyCtx {
	return pyCtx{hint: hint, depth: c.depth + 1, direct: c.direct}
}

// pyDocument is one schema rendered as Python: named types for its root, its local $refs and its
// object schemas (TypedDicts).
type pyDocument struct {
	names   *nameTable
	prefix  string
	root    any
	refs    map[string]*pyNamed  // by decoded JSON pointer; "" is the root
	classes map[*object]*pyNamed // inline object schemas rendered as TypedDicts
	order   []*pyNamed
	pending []*pyNamed
	cur     *pyNamed
}

// pyNamed is one named type: a TypedDict class when its schema is a plain object schema with
// properties, else a `type Name = ...` alias.
type pyNamed struct {
	name   string
	schema any
	class  *pyClass
	alias  pyExpr
	edges  []*pyNamed
	broken map[*pyNamed]bool
}

// pyClass is a rendered TypedDict.
type pyClass struct {
	fields []pyField
	extra  *pyExpr // the type of keys not listed (extra_items); nil: closed
}

type pyField struct {
	key      string
	required bool
	t        pyExpr
	doc      string
}

func newPyDocument(names *nameTable, prefix, rootName string, root any) *pyDocument {
	d := &pyDocument{names: names, prefix: prefix, root: root, refs: map[string]*pyNamed{}, classes: map[*object]*pyNamed{}}
	d.refs[""] = d.add(rootName, root)
	return d
}

func (d *pyDocument) add(name string, schema any) *pyNamed {
	nt := &pyNamed{name: name, schema: schema, broken: map[*pyNamed]bool{}}
	d.order = append(d.order, nt)
	d.pending = append(d.pending, nt)
	return nt
}

// newName allocates a type name from a hint, cut to maxPyName.
func (d *pyDocument) newName(hint string) string {
	if len(hint) > maxPyName {
		hint = hint[:maxPyName]
	}
	return d.names.alloc(hint)
}

// render renders every named type reachable from the root, then breaks the cycles of aliases
// that a type checker would reject (`type A = B | str; type B = A | int`).
func (d *pyDocument) render() {
	for len(d.pending) > 0 {
		nt := d.pending[0]
		d.pending = d.pending[1:]
		d.renderNamed(nt)
	}
	var rerender []*pyNamed
	color := map[*pyNamed]int{}
	var visit func(u *pyNamed)
	visit = func(u *pyNamed) {
		color[u] = 1
		for _, v := range u.edges {
			switch color[v] {
			case 0:
				visit(v)
			case 1:
				if !u.broken[v] {
					if len(u.broken) == 0 {
						rerender = append(rerender, u)
					}
					u.broken[v] = true
				}
			}
		}
		color[u] = 2
	}
	for _, nt := range d.order {
		if color[nt] == 0 {
			visit(nt)
		}
	}
	for _, nt := range rerender {
		d.renderNamed(nt)
	}
}

func (d *pyDocument) renderNamed(nt *pyNamed) {
	d.cur = nt
	nt.edges = nil
	if o, ok := nt.schema.(*object); ok && isClassSchema(o) {
		nt.class = d.classOf(o, nt.name, 0)
	} else {
		nt.alias = d.typeOf(nt.schema, pyCtx{hint: nt.name, direct: true})
	}
	d.cur = nil
}

// isClassSchema reports whether o is a plain object schema with listed keys, which renders as a
// TypedDict.
func isClassSchema(o *object) bool {
	for _, k := range []string{"$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "const", "enum"} {
		if o.has(k) {
			return false
		}
	}
	if types, have := typeNames(o); have {
		if len(types) != 1 || types[0] != "object" {
			return false
		}
	} else if !hasAny(o, objectKeywords) || hasAny(o, arrayKeywords) {
		return false
	}
	return listsKeys(o)
}

// listsKeys reports whether an object schema names keys (properties or required): a TypedDict.
func listsKeys(o *object) bool {
	props, _ := o.vals["properties"].(*object)
	return props != nil && len(props.keys) > 0 || len(requiredNames(o)) > 0
}

// typeOf renders schema s. Python has no intersection type: of the parts a schema's keywords give
// (`$ref`, its type, `allOf` members, one union for each of `anyOf` and `oneOf`) the first that says
// something is used, and the comment says so; it admits more than the schema, never less.
func (d *pyDocument) typeOf(s any, c pyCtx) pyExpr {
	o, isObj := s.(*object)
	if !isObj {
		if b, isBool := s.(bool); isBool {
			if b {
				return pyJSON
			}
			return pyNever
		}
		return pyAny("not a schema")
	}
	if c.depth > maxDepth {
		return pyAny("schema nested too deeply")
	}
	var parts []pyExpr
	if ref, ok := o.get("$ref"); ok {
		if s, isStr := ref.(string); isStr {
			parts = append(parts, d.ref(s, c))
		} else {
			parts = append(parts, pyAny("$ref is not a string"))
		}
	}
	for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
		if o.has(k) {
			parts = append(parts, pyAny(k+" is not supported"))
		}
	}
	if core, ok := d.core(o, c); ok {
		parts = append(parts, core)
	}
	if all, ok := o.vals["allOf"].([]any); ok {
		for i, b := range all {
			parts = append(parts, d.typeOf(b, c.same(c.hint+"All"+strconv.Itoa(i+1))))
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := o.vals[k].([]any); ok && len(branches) > 0 {
			members := make([]pyExpr, len(branches))
			for i, b := range branches {
				members[i] = d.typeOf(b, c.same(c.hint+"Option"+strconv.Itoa(i+1)))
			}
			parts = append(parts, pyUnion(members...))
		}
	}
	return pyIntersection(parts)
}

// pyIntersection keeps the first part that says something (not JsonValue); Never wins.
func pyIntersection(parts []pyExpr) pyExpr {
	var kept []pyExpr
	var notes []string
	for _, p := range parts {
		if p.text == pyNever.text {
			return pyNever.withNotes(p.notes...)
		}
		notes = append(notes, p.notes...)
		if p.text != pyJSON.text {
			kept = append(kept, p)
		}
	}
	switch len(kept) {
	case 0:
		return pyExpr{text: pyJSON.text, notes: notes}
	case 1:
		return pyExpr{text: kept[0].text, parts: kept[0].parts, notes: notes}
	}
	return pyExpr{text: kept[0].text, parts: kept[0].parts, notes: append(notes,
		fmt.Sprintf("all of %d schemas: only the first is typed", len(kept)))}
}

// ref renders a local `$ref` as a named type (so recursion works), anything else as Any.
func (d *pyDocument) ref(ref string, c pyCtx) pyExpr {
	ptr, err := localPointer(ref)
	if err != "" {
		return pyAny(err)
	}
	nt, ok := d.refs[ptr]
	if !ok {
		target, found := resolvePointer(d.root, ptr)
		if !found {
			return pyAny("unresolved $ref " + ref)
		}
		if _, isSchema := target.(*object); !isSchema {
			if _, isBool := target.(bool); !isBool {
				return pyAny("$ref target is not a schema: " + ref)
			}
		}
		nt = d.add(d.newName(d.prefix+defName(ptr)), target)
		d.refs[ptr] = nt
	}
	if c.direct && d.cur != nil {
		if d.cur.broken[nt] {
			return pyAny("circular $ref " + ref)
		}
		d.cur.edges = append(d.cur.edges, nt)
	}
	return pyExpr{text: nt.name}
}

// class renders an inline object schema as a TypedDict of its own, named once from the hint.
func (d *pyDocument) class(o *object, c pyCtx) pyExpr {
	nt, ok := d.classes[o]
	if !ok {
		nt = &pyNamed{name: d.newName(c.hint), schema: o, broken: map[*pyNamed]bool{}}
		d.classes[o] = nt
		d.order = append(d.order, nt)
		nt.class = d.classOf(o, nt.name, c.depth+1)
	}
	return pyExpr{text: nt.name}
}

// classOf renders the fields of an object schema. Keys not listed are typed by
// additionalProperties (absent or true: JsonValue; false: none).
func (d *pyDocument) classOf(o *object, name string, depth int) *pyClass {
	c := pyCtx{depth: depth}
	props, _ := o.vals["properties"].(*object)
	required := requiredNames(o)
	isRequired := make(map[string]bool, len(required))
	for _, k := range required {
		isRequired[k] = true
	}
	cl := &pyClass{extra: d.extraType(o, c, name+"Value")}
	var dropped bool
	if props != nil {
		for _, k := range props.keys {
			ps := props.vals[k]
			if k == "" {
				dropped = true
				continue
			}
			cl.fields = append(cl.fields, pyField{key: k, required: isRequired[k], t: d.typeOf(ps, c.deferred(name+pascal(k))), doc: docOf(ps)})
		}
	}
	for _, k := range required {
		if k == "" {
			dropped = true
			continue
		}
		if props == nil || !props.has(k) {
			t := pyJSON
			if cl.extra != nil {
				t = *cl.extra
			}
			cl.fields = append(cl.fields, pyField{key: k, required: true, t: t})
		}
	}
	if dropped { // a TypedDict key cannot be empty: the key "" goes with the other keys
		if cl.extra == nil {
			cl.extra = &pyJSON
		}
		e := cl.extra.withNotes(`the key "" is typed with the other keys (a TypedDict key cannot be empty)`)
		cl.extra = &e
	}
	return cl
}

// extraType is the type of the keys an object schema does not list: additionalProperties (absent
// or true: JsonValue), or when that is false the union of its patternProperties' types; nil when
// there can be none.
func (d *pyDocument) extraType(o *object, c pyCtx, hint string) *pyExpr {
	addl, has := o.get("additionalProperties")
	if !has || addl == true {
		return &pyJSON
	}
	var members []pyExpr
	if as, ok := addl.(*object); ok {
		members = append(members, d.typeOf(as, c.deferred(hint)))
	}
	if pp, ok := o.vals["patternProperties"].(*object); ok {
		for _, k := range pp.keys {
			members = append(members, d.typeOf(pp.vals[k], c.deferred(hint)))
		}
	}
	if len(members) == 0 {
		return nil
	}
	u := pyUnion(members...)
	if u.text == pyNever.text {
		return nil
	}
	return &u
}

// core renders `const`, else `enum`, else `type` (or the type its keywords imply).
func (d *pyDocument) core(o *object, c pyCtx) (pyExpr, bool) {
	types, haveTypes := typeNames(o)
	if v, isConst := o.get("const"); isConst {
		if haveTypes && !kindAllowed(jsonKind(v), types) {
			return pyNever, true
		}
		return pyLiteral(v), true
	}
	if ev, isEnum := o.get("enum"); isEnum {
		values, isArr := ev.([]any)
		if !isArr {
			return pyAny("enum is not an array"), true
		}
		var kept []any
		for _, v := range values {
			if !haveTypes || kindAllowed(jsonKind(v), types) {
				kept = append(kept, v)
			}
		}
		members := make([]pyExpr, len(kept))
		for i, v := range kept {
			members[i] = pyLiteral(v)
		}
		if len(kept) > maxEnumMembers {
			for i, v := range kept {
				members[i] = pyBase(v)
			}
			return pyUnion(members...).withNotes(fmt.Sprintf("one of %d allowed values", len(kept))), true
		}
		return pyUnion(members...), true
	}
	if !haveTypes {
		if hasAny(o, objectKeywords) {
			types = append(types, "object")
		}
		if hasAny(o, arrayKeywords) {
			types = append(types, "array")
		}
		if len(types) == 0 {
			return pyExpr{}, false
		}
	}
	members := make([]pyExpr, 0, len(types))
	for _, t := range types {
		switch t {
		case "string":
			members = append(members, pyStr)
		case "integer":
			members = append(members, pyInt)
		case "number":
			members = append(members, pyFloat)
		case "boolean":
			members = append(members, pyBool)
		case "null":
			members = append(members, pyNone)
		case "object":
			members = append(members, d.mapping(o, c))
		case "array":
			members = append(members, d.list(o, c))
		case "any":
			members = append(members, pyJSON)
		default:
			members = append(members, pyAny("unsupported type "+pyQuote(t)))
		}
	}
	return pyUnion(members...), true
}

// mapping renders an object schema: a TypedDict when it lists keys, else `dict[str, T]` with T
// from extraType (none: `dict[str, Never]`).
func (d *pyDocument) mapping(o *object, c pyCtx) pyExpr {
	if listsKeys(o) {
		return d.class(o, c)
	}
	t := d.extraType(o, c, c.hint+"Value")
	if t == nil {
		return pyExpr{text: "dict[str, Never]"}
	}
	return pyExpr{text: "dict[str, " + t.text + "]", notes: t.notes}
}

// list renders an array schema as `list[T]`. A tuple (`prefixItems`, or a draft-07 `items` array)
// is a list of the union of its element types, since a result arrives as a list.
func (d *pyDocument) list(o *object, c pyCtx) pyExpr {
	var elems []any
	var rest any
	hasRest := false
	if pi, ok := o.vals["prefixItems"].([]any); ok {
		elems = pi
		rest, hasRest = o.get("items")
	} else if it, ok := o.vals["items"].([]any); ok {
		elems = it
		rest, hasRest = o.get("additionalItems")
	} else {
		rest, hasRest = o.get("items")
	}
	hint := c.hint + "Item"
	members := make([]pyExpr, 0, len(elems)+1)
	for i, e := range elems {
		members = append(members, d.typeOf(e, c.deferred(hint+strconv.Itoa(i+1))))
	}
	if !hasRest || rest == true {
		members = append(members, pyJSON)
	} else if rest != false {
		members = append(members, d.typeOf(rest, c.deferred(hint)))
	}
	u := pyUnion(members...)
	if u.text == pyNever.text && len(u.notes) == 0 {
		return pyExpr{text: "list[Never]"}
	}
	return pyExpr{text: "list[" + u.text + "]", notes: u.notes}
}

var pyIntLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// pyLiteral renders a JSON value as the type of exactly that value where Python's Literal can say
// it (strings, integers, booleans, None), else as its base type.
func pyLiteral(v any) pyExpr {
	switch x := v.(type) {
	case nil:
		return pyNone
	case bool:
		if x {
			return pyExpr{text: "Literal[True]"}
		}
		return pyExpr{text: "Literal[False]"}
	case string:
		return pyExpr{text: "Literal[" + pyQuote(x) + "]"}
	case json.Number:
		if pyIntLiteral.MatchString(x.String()) {
			return pyExpr{text: "Literal[" + x.String() + "]"}
		}
	}
	return pyBase(v)
}

// pyBase is the base type of a JSON value.
func pyBase(v any) pyExpr {
	switch jsonKind(v) {
	case "null":
		return pyNone
	case "boolean":
		return pyBool
	case "string":
		return pyStr
	case "integer":
		return pyInt
	case "number":
		return pyFloat
	case "array":
		return pyList
	}
	return pyDict
}

// localPointer decodes a local $ref's JSON pointer, or says why it cannot.
func localPointer(ref string) (string, string) {
	frag, isLocal := strings.CutPrefix(ref, "#")
	if !isLocal {
		return "", "non-local $ref " + ref
	}
	ptr, err := url.PathUnescape(frag)
	if err != nil {
		return "", "invalid $ref " + ref
	}
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		return "", "$ref to an anchor is not supported: " + ref
	}
	return ptr, ""
}

// distinct returns the distinct notes, in order of first appearance.
func distinct(notes []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range notes {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
