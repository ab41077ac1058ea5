package sdkgen

import (
	"encoding/json"
	"unicode/utf8"
)

// annotationKeywords never constrain a value.
var annotationKeywords = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$defs": true, "definitions": true,
	"title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

// accepts is a deliberately small JSON Schema validator, used to decide whether an example may be
// shown. It evaluates type, enum, const, minLength, maxLength, properties, required,
// additionalProperties, minProperties and maxProperties. known is false when a schema that
// applies to value uses any other keyword (format, pattern, $ref, allOf, ...): the caller then
// does not know, and shows nothing.
func accepts(schema, value any) (ok, known bool) {
	switch s := schema.(type) {
	case bool:
		return s, true
	case *object:
		for _, k := range s.keys {
			if annotationKeywords[k] {
				continue
			}
			ok, known := acceptsKeyword(s, k, value)
			if !known || !ok {
				return ok, known
			}
		}
		return true, true
	}
	return false, false
}

func acceptsKeyword(s *object, k string, value any) (ok, known bool) {
	v := s.vals[k]
	kind := jsonKind(value)
	switch k {
	case "type":
		types, _ := typeNames(s)
		return kindAllowed(kind, types), true
	case "enum":
		values, isArr := v.([]any)
		if !isArr {
			return false, false
		}
		for _, e := range values {
			if jsonEqual(e, value) {
				return true, true
			}
		}
		return false, true
	case "const":
		return jsonEqual(v, value), true
	case "minLength", "maxLength":
		n, isNum := v.(json.Number)
		if !isNum {
			return false, false
		}
		str, isStr := value.(string)
		if !isStr {
			return true, true
		}
		limit := nonNegativeInt(n)
		if k == "minLength" {
			return utf8.RuneCountInString(str) >= limit, true
		}
		return utf8.RuneCountInString(str) <= limit, true
	case "properties", "required", "additionalProperties", "minProperties", "maxProperties":
		obj, isObj := value.(*object)
		if !isObj {
			return true, true
		}
		return acceptsObjectKeyword(s, k, obj)
	}
	return false, false
}

func acceptsObjectKeyword(s *object, k string, obj *object) (ok, known bool) {
	props, _ := s.vals["properties"].(*object)
	switch k {
	case "properties":
		if props == nil {
			return false, false
		}
		for _, name := range obj.keys {
			if ps, has := props.get(name); has {
				if ok, known := accepts(ps, obj.vals[name]); !ok || !known {
					return ok, known
				}
			}
		}
	case "required":
		if _, isArr := s.vals["required"].([]any); !isArr {
			return false, false
		}
		for _, name := range requiredNames(s) {
			if !obj.has(name) {
				return false, true
			}
		}
	case "additionalProperties":
		for _, name := range obj.keys {
			if props != nil && props.has(name) {
				continue
			}
			if ok, known := accepts(s.vals[k], obj.vals[name]); !ok || !known {
				return ok, known
			}
		}
	case "minProperties", "maxProperties":
		n, isNum := s.vals[k].(json.Number)
		if !isNum {
			return false, false
		}
		if k == "minProperties" {
			return len(obj.keys) >= nonNegativeInt(n), true
		}
		return len(obj.keys) <= nonNegativeInt(n), true
	}
	return true, true
}

// jsonEqual compares decoded JSON values as JSON Schema does (1 equals 1.0; key order does not
// matter).
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, errX := x.Float64()
		fy, errY := y.Float64()
		return errX == nil && errY == nil && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *object:
		y, ok := b.(*object)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for _, k := range x.keys {
			yv, has := y.get(k)
			if !has || !jsonEqual(x.vals[k], yv) {
				return false
			}
		}
		return true
	case nil, bool, string:
		return a == b
	}
	return false
}
