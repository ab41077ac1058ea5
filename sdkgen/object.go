package sdkgen

import (
	"encoding/json"
	"strings"
)

// maxIndexUnion bounds the index signature of an object that has both properties and an
// additionalProperties schema. TypeScript requires every property to fit the index type, so that
// type is the union of the additional schema and every property type; when that union would be
// long or span lines, the index type is `unknown`, with the other keys' type in a comment.
const maxIndexUnion = 160

type member struct {
	key      string
	optional bool
	t        expr
	doc      string
}

// objectType renders an object schema:
//   - additionalProperties absent or true: `{ ...properties } & Record<string, JsonValue>`;
//   - additionalProperties false: the closed `{ ...properties }`;
//   - additionalProperties a schema: `{ ...properties; [key: string]: T }`.
func (d *document) objectType(o *object, c ctx) expr {
	inner := c.deferred(c.indent + 1)
	props, _ := o.vals["properties"].(*object)
	required := requiredNames(o)
	isRequired := make(map[string]bool, len(required))
	for _, k := range required {
		isRequired[k] = true
	}

	addl, hasAddl := o.get("additionalProperties")
	open := !hasAddl || addl == true
	var extra []expr // types of properties not listed in "properties"
	if as, ok := addl.(*object); ok {
		at := d.typeOf(as, inner)
		if at.isJSON() {
			open = true
		} else {
			extra = append(extra, at)
		}
	}
	if pp, ok := o.vals["patternProperties"].(*object); ok && !open {
		for _, k := range pp.keys {
			extra = append(extra, d.typeOf(pp.vals[k], inner))
		}
	}

	var members []member
	if props != nil {
		for _, k := range props.keys {
			ps := props.vals[k]
			members = append(members, member{key: k, optional: !isRequired[k], t: d.typeOf(ps, inner), doc: docOf(ps)})
		}
	}
	for _, k := range required {
		if props == nil || !props.has(k) {
			t := exprJSON
			if len(extra) > 0 {
				t = union(extra...)
			}
			members = append(members, member{key: k, t: t})
		}
	}

	var index *expr
	if len(extra) > 0 {
		it := indexType(extra, members)
		index = &it
	}
	switch {
	case len(members) == 0 && index == nil && open:
		return exprObject
	case len(members) == 0 && index == nil:
		return primary("Record<string, never>")
	case len(members) == 0 && !strings.Contains(index.text, "\n"):
		return primary("{ [key: string]: " + index.text + " }")
	}
	body := objectBody(members, index, c.indent)
	if open {
		return intersection(body, exprObject)
	}
	return body
}

// indexType is the type of an index signature that every member must also fit.
func indexType(extra []expr, members []member) expr {
	if len(members) == 0 {
		return union(extra...)
	}
	all := append([]expr(nil), extra...)
	optional := false
	for _, m := range members {
		all = append(all, m.t)
		optional = optional || m.optional
	}
	if optional {
		all = append(all, exprUndef)
	}
	u := exactUnion(all...)
	if len(u.text) > maxIndexUnion || strings.Contains(u.text, "\n") {
		return unknownExpr("other keys: " + union(extra...).text)
	}
	return u
}

func objectBody(members []member, index *expr, indent int) expr {
	pad := indentation(indent + 1)
	var b strings.Builder
	b.WriteString("{\n")
	for _, m := range members {
		if doc := docComment(m.doc); doc != "" {
			b.WriteString(pad + doc + "\n")
		}
		b.WriteString(pad + propertyKey(m.key))
		if m.optional {
			b.WriteByte('?')
		}
		b.WriteString(": " + m.t.text + ";\n")
	}
	if index != nil {
		b.WriteString(pad + "[key: string]: " + index.text + ";\n")
	}
	b.WriteString(indentation(indent) + "}")
	return primary(b.String())
}

// arrayType renders an array schema: `T[]` from `items`, or a tuple from `prefixItems` (or a
// draft-07 `items` array) whose elements past `minItems` are optional and whose rest comes from
// `items` (or `additionalItems`).
func (d *document) arrayType(o *object, c ctx) expr {
	inner := c.deferred(c.indent)
	var prefix []any
	var rest any
	var hasRest, isTuple bool
	if pi, ok := o.vals["prefixItems"].([]any); ok {
		prefix, isTuple = pi, true
		rest, hasRest = o.get("items")
	} else if it, ok := o.vals["items"].([]any); ok {
		prefix, isTuple = it, true
		rest, hasRest = o.get("additionalItems")
	} else {
		rest, hasRest = o.get("items")
	}
	if !isTuple {
		switch {
		case !hasRest || rest == true:
			return exprArray
		case rest == false:
			return primary("[]")
		}
		return arrayOf(d.typeOf(rest, inner))
	}

	minItems := nonNegativeInt(o.vals["minItems"])
	elems := make([]string, 0, len(prefix)+1)
	for i, s := range prefix {
		t := d.typeOf(s, inner)
		if i < minItems {
			elems = append(elems, t.at(precUnion))
		} else {
			elems = append(elems, t.at(precPrimary)+"?")
		}
	}
	closed := rest == false
	if maxItems, ok := o.vals["maxItems"].(json.Number); ok && nonNegativeInt(maxItems) <= len(prefix) {
		closed = true
	}
	switch {
	case closed:
	case !hasRest || rest == true:
		elems = append(elems, "..."+exprArray.text)
	default:
		elems = append(elems, "..."+arrayOf(d.typeOf(rest, inner)).text)
	}
	return primary("[" + strings.Join(elems, ", ") + "]")
}

// nonNegativeInt reads a count keyword such as minItems; anything else counts as 0.
func nonNegativeInt(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0
	}
	if i > 1<<20 {
		return 1 << 20
	}
	return int(i)
}
