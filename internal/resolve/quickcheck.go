package resolve

import (
	"encoding/json"
)

// quickSchema is a fast, partial check of arguments against the simplest
// and most common input schemas: an object whose properties, if any, have
// primitive types, with required names and, optionally, no other
// properties. It can only say "valid for sure": when it cannot, or when the
// arguments look invalid, the full validator decides (and words the error).
// So it never changes what is accepted; it only skips the full validator
// (about 1 µs per call) for arguments it can vouch for.
type quickSchema struct {
	props    map[string]quickTypes // declared properties and their allowed types
	required []string
	closed   bool // additionalProperties: false
}

// quickTypes is a set of JSON Schema primitive types, one bit each.
type quickTypes uint8

const (
	qString quickTypes = 1 << iota
	qInteger
	qNumber
	qBoolean
	qNull
	qAny = qString | qInteger | qNumber | qBoolean | qNull // no "type": anything primitive; objects and arrays are not vouched for
)

// annotations are keywords that never affect validation in JSON Schema
// 2020-12. ("format" is one too unless a validator asserts it; a schema
// using it simply gets no quick check.)
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
}

// newQuickSchema returns the quick check for a compiled input schema's
// source, or nil when the schema uses anything it does not understand.
func newQuickSchema(raw json.RawMessage) *quickSchema {
	var root map[string]json.RawMessage
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	q := &quickSchema{}
	for k, v := range root {
		switch {
		case annotations[k]:
		case k == "type":
			var t string
			if json.Unmarshal(v, &t) != nil || t != "object" {
				return nil
			}
		case k == "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil {
				return nil
			}
			q.props = make(map[string]quickTypes, len(props))
			for name, p := range props {
				t, ok := quickProperty(p)
				if !ok {
					return nil
				}
				q.props[name] = t
			}
		case k == "required":
			if json.Unmarshal(v, &q.required) != nil {
				return nil
			}
		case k == "additionalProperties":
			var b bool
			if json.Unmarshal(v, &b) != nil {
				return nil
			}
			q.closed = !b
		default:
			return nil
		}
	}
	if _, ok := root["type"]; !ok {
		return nil
	}
	return q
}

// quickProperty reads a property schema made only of "type" (a primitive
// type or a list of them) and annotations.
func quickProperty(raw json.RawMessage) (quickTypes, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return 0, false
	}
	types := qAny
	for k, v := range p {
		switch {
		case annotations[k]:
		case k == "type":
			var names []string
			var one string
			if json.Unmarshal(v, &one) == nil {
				names = []string{one}
			} else if json.Unmarshal(v, &names) != nil || len(names) == 0 {
				return 0, false
			}
			types = 0
			for _, n := range names {
				t, ok := map[string]quickTypes{"string": qString, "integer": qInteger, "number": qNumber,
					"boolean": qBoolean, "null": qNull}[n]
				if !ok {
					return 0, false
				}
				types |= t
			}
		default:
			return 0, false
		}
	}
	return types, true
}

// valid reports whether args certainly satisfy the schema. false means
// "not known": the full validator must decide.
func (q *quickSchema) valid(args map[string]any) bool {
	for _, name := range q.required {
		if _, ok := args[name]; !ok {
			return false
		}
	}
	for name, v := range args {
		t, declared := q.props[name]
		switch {
		case !declared && q.closed:
			return false
		case !declared:
			continue // additional properties are allowed, whatever they hold
		case !t.holds(v):
			return false
		}
	}
	return true
}

// validFlat is valid on a flat object's fields (flat.go), read from b.
func (q *quickSchema) validFlat(b []byte, o *flatObject) bool {
	n := int(o.n)
	for _, name := range q.required {
		found := false
		for i := range n {
			if string(o.key(b, i)) == name {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for i := range n {
		t, declared := q.props[string(o.key(b, i))]
		switch {
		case !declared && q.closed:
			return false
		case !declared:
			continue
		case t&o.fields[i].kind == 0:
			return false
		}
	}
	return true
}

// holds reports whether v certainly has one of the types.
func (t quickTypes) holds(v any) bool {
	switch v := v.(type) {
	case string:
		return t&qString != 0
	case bool:
		return t&qBoolean != 0
	case nil:
		return t&qNull != 0
	case json.Number:
		if t&qNumber != 0 {
			return true
		}
		// An integer written without a fraction or an exponent; "1.0" is
		// an integer too, but the full validator can say so.
		return t&qInteger != 0 && plainInteger(string(v))
	default:
		return false // objects and arrays: not vouched for
	}
}

func plainInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
