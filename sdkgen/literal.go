package sdkgen

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// maxEnumMembers caps a literal union. A longer enum widens to its members' base types with a
// comment saying how many values it had: a 5,000-member union costs the model far more to read
// than it helps.
const maxEnumMembers = 200

// literal renders a JSON value as the TypeScript type that admits exactly that value: strings,
// numbers, booleans and null as literal types, arrays as tuples, objects as closed object types.
// Nesting deeper than maxDepth widens to JsonValue.
func literal(v any) expr { return literalAt(v, 0) }

func literalAt(v any, depth int) expr {
	if depth > maxDepth {
		return exprJSON
	}
	switch x := v.(type) {
	case nil:
		return exprNull
	case bool:
		if x {
			return primary("true")
		}
		return primary("false")
	case string:
		return primary(quote(x))
	case json.Number:
		return numberLiteral(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = literalAt(e, depth+1).text
		}
		return primary("[" + strings.Join(parts, ", ") + "]")
	case *object:
		if len(x.keys) == 0 {
			return primary("Record<string, never>")
		}
		parts := make([]string, len(x.keys))
		for i, k := range x.keys {
			parts[i] = propertyKey(k) + ": " + literalAt(x.vals[k], depth+1).text
		}
		return primary("{ " + strings.Join(parts, "; ") + " }")
	}
	return unknownExpr("unsupported value")
}

// numberLiteral keeps the number as written (JSON's number grammar is a subset of TypeScript's);
// a number too large for a float64 widens to `number`.
func numberLiteral(n json.Number) expr {
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return exprNumber
	}
	s := n.String()
	if strings.HasPrefix(s, "-") {
		return expr{text: s, prec: precUnary}
	}
	return primary(s)
}

// enumType renders an enum as a union of literals. When the schema also names types, values of
// other types are dropped, since no instance can have them.
func enumType(values []any, types []string, haveTypes bool) expr {
	var kept []any
	for _, v := range values {
		if !haveTypes || kindAllowed(jsonKind(v), types) {
			kept = append(kept, v)
		}
	}
	if len(kept) > maxEnumMembers {
		return widenedEnum(kept)
	}
	members := make([]expr, len(kept))
	for i, v := range kept {
		members[i] = literal(v)
	}
	return union(members...)
}

func kindAllowed(kind string, types []string) bool {
	for _, t := range types {
		if kindMatches(kind, t) {
			return true
		}
	}
	return false
}

// widenedEnum renders a too-long enum as the union of its members' base types.
func widenedEnum(values []any) expr {
	set := map[string]expr{}
	for _, v := range values {
		var e expr
		switch jsonKind(v) {
		case "null":
			e = exprNull
		case "boolean":
			e = exprBoolean
		case "string":
			e = exprString
		case "integer", "number":
			e = exprNumber
		case "array":
			e = exprArray
		default:
			e = exprObject
		}
		set[e.text] = e
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	members := make([]expr, len(keys))
	for i, k := range keys {
		members[i] = set[k]
	}
	u := union(members...)
	return expr{text: u.text + " " + inlineComment(fmt.Sprintf("one of %d allowed values", len(values))), prec: u.prec}
}
