package sdkgen

import "strings"

// Precedence of a rendered type expression, loosest first. A context that needs a tighter
// expression parenthesises a looser one: `(A | B)[]`, `A & (B | C)`, `(-1)[]`.
const (
	precUnion = iota + 1
	precIntersection
	precUnary
	precPrimary
)

// expr is a rendered TypeScript type with its precedence. Its text may span lines when it holds
// an object type; continuation lines carry their own indentation.
type expr struct {
	text string
	prec int
	// parts are the members of a union or intersection, so that nested ones flatten.
	parts []expr
}

var (
	exprJSON    = primary("JsonValue")
	exprNever   = primary("never")
	exprNull    = primary("null")
	exprString  = primary("string")
	exprNumber  = primary("number")
	exprBoolean = primary("boolean")
	exprUndef   = primary("undefined")
	exprObject  = primary("Record<string, JsonValue>")
	exprArray   = primary("JsonValue[]")
)

func primary(text string) expr { return expr{text: text, prec: precPrimary} }

// unknownExpr is the rendering of what TypeScript cannot express, with the reason beside it.
func unknownExpr(reason string) expr {
	return primary("unknown " + inlineComment(reason))
}

func (e expr) isJSON() bool      { return e.text == exprJSON.text }
func (e expr) isNever() bool     { return e.text == exprNever.text }
func (e expr) isUndefined() bool { return e.text == exprUndef.text }
func (e expr) isUnknown() bool   { return strings.HasPrefix(e.text, "unknown ") }

// at returns the text of e, parenthesised when it is looser than prec.
func (e expr) at(prec int) string {
	if e.prec < prec {
		return "(" + e.text + ")"
	}
	return e.text
}

// union joins members with `|`: duplicates and `never` drop out, a JsonValue member absorbs the
// other JSON members (everything but `undefined` and `unknown`), and no members at all is `never`.
func union(members ...expr) expr { return unionOf(members, true) }

// exactUnion is union without the absorption, for where TypeScript compares the members' types
// exactly: an index signature must admit every property type as written, and `[string?]` (whose
// element may be undefined) is not assignable to JsonValue.
func exactUnion(members ...expr) expr { return unionOf(members, false) }

func unionOf(members []expr, absorb bool) expr {
	var out []expr
	seen := map[string]bool{}
	members = flatten(members, precUnion)
	absorbed := false
	for _, m := range members {
		absorbed = absorbed || absorb && m.isJSON()
	}
	if absorbed {
		out = []expr{exprJSON}
		seen[exprJSON.text] = true
	}
	for _, m := range members {
		if absorbed && !m.isUndefined() && !m.isUnknown() {
			continue
		}
		if m.isNever() || seen[m.text] {
			continue
		}
		seen[m.text] = true
		out = append(out, m)
	}
	switch len(out) {
	case 0:
		return exprNever
	case 1:
		return out[0]
	}
	texts := make([]string, len(out))
	for i, m := range out {
		texts[i] = m.at(precIntersection)
	}
	return expr{text: strings.Join(texts, " | "), prec: precUnion, parts: out}
}

// intersection joins members with `&`: duplicates and JsonValue members drop out (each member of
// a rendered schema is already JSON), a `never` member makes the whole `never`, and no members at
// all is JsonValue. `Record<string, JsonValue>` goes last, after the members that say more.
func intersection(members ...expr) expr {
	var out []expr
	seen := map[string]bool{}
	open := false
	for _, m := range flatten(members, precIntersection) {
		if m.isNever() {
			return exprNever
		}
		if m.text == exprObject.text {
			open = true
			continue
		}
		if m.isJSON() || seen[m.text] {
			continue
		}
		seen[m.text] = true
		out = append(out, m)
	}
	if open {
		out = append(out, exprObject)
	}
	switch len(out) {
	case 0:
		return exprJSON
	case 1:
		return out[0]
	}
	texts := make([]string, len(out))
	for i, m := range out {
		texts[i] = m.at(precUnary)
	}
	return expr{text: strings.Join(texts, " & "), prec: precIntersection, parts: out}
}

// flatten replaces each member that is itself a union (or intersection, by prec) with its parts.
func flatten(members []expr, prec int) []expr {
	var out []expr
	for _, m := range members {
		if m.prec == prec && m.parts != nil {
			out = append(out, m.parts...)
		} else {
			out = append(out, m)
		}
	}
	return out
}

// arrayOf renders `T[]`.
func arrayOf(elem expr) expr {
	return primary(elem.at(precPrimary) + "[]")
}
