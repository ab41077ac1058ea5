package sdkgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// object is a decoded JSON object that remembers the order of its keys, so that properties render
// in the order the schema's author wrote them. A duplicated key keeps its first position and its
// last value, as encoding/json does for the value.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// str returns the string value of key, or "" when it is absent or not a string.
func (o *object) str(key string) string {
	s, _ := o.vals[key].(string)
	return s
}

// has reports whether key is present, whatever its value.
func (o *object) has(key string) bool {
	_, ok := o.vals[key]
	return ok
}

// parseJSON decodes data into *object, []any, string, json.Number, bool and nil values.
// encoding/json's validator runs first, so nesting deeper than its limit is an error rather than
// deep recursion here.
func parseJSON(data []byte) (any, error) {
	if !json.Valid(data) {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("invalid JSON: object key %v", kt)
				}
				val, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[key]; !dup {
					o.keys = append(o.keys, key)
				}
				o.vals[key] = val
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				val, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, val)
			}
			_, err := dec.Token() // ']'
			return arr, err
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	default:
		return t, nil
	}
}

// typeNames returns the schema's "type" keyword as a list: a string gives one name, an array its
// string members; absent or malformed gives nil and ok=false.
func typeNames(o *object) (names []string, ok bool) {
	switch t := o.vals["type"].(type) {
	case string:
		return []string{t}, true
	case []any:
		for _, e := range t {
			if s, isStr := e.(string); isStr {
				names = append(names, s)
			}
		}
		return names, true
	}
	return nil, false
}

// objectKeywords and arrayKeywords imply a type when a schema omits "type": a schema with
// "properties" describes an object even if, strictly, it would also accept a string. Rendering the
// type the author meant is more useful than JsonValue.
var (
	objectKeywords = []string{"properties", "required", "additionalProperties", "patternProperties"}
	arrayKeywords  = []string{"items", "prefixItems", "additionalItems"}
)

func hasAny(o *object, keys []string) bool {
	for _, k := range keys {
		if o.has(k) {
			return true
		}
	}
	return false
}

// jsonKind names the JSON type of a decoded value as JSON Schema's "type" would ("integer" for
// integral numbers).
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if isIntegral(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case *object:
		return "object"
	}
	return ""
}

func isIntegral(n json.Number) bool {
	if _, err := n.Int64(); err == nil {
		return true
	}
	f, err := n.Float64()
	return err == nil && !math.IsInf(f, 0) && f == math.Trunc(f)
}

// kindMatches reports whether a value of JSON kind k satisfies the schema type name t.
func kindMatches(k, t string) bool {
	return k == t || (t == "number" && k == "integer")
}

// requiredNames returns the string members of the "required" keyword, without duplicates.
func requiredNames(o *object) []string {
	arr, _ := o.vals["required"].([]any)
	seen := map[string]bool{}
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
