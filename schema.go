package ptcx

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// goTypeSchemas are the types whose JSON encoding jsonschema-go does not
// infer as encoding/json writes it: []byte is a base64 string (not an array
// of integers), json.RawMessage is any JSON value, and time.Time is an RFC
// 3339 string (the format tells the model so).
var goTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[[]byte]():          {Types: []string{"null", "string"}, ContentEncoding: "base64"},
	reflect.TypeFor[json.RawMessage](): {},
	reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
}

// inputSchema infers the schema of a tool's arguments: always an object.
func inputSchema(t reflect.Type, types map[reflect.Type]*jsonschema.Schema) (json.RawMessage, error) {
	s, err := inferSchema(t, types)
	if err != nil {
		return nil, err
	}
	// A nil *T or map decodes from null, but arguments are always an
	// object: the root never admits null.
	if slices.Equal(s.Types, []string{"null", "object"}) {
		s.Type, s.Types = "object", nil
	}
	if s.Type != "object" {
		return nil, errors.New("tool arguments are a JSON object: use a struct, a pointer to one, or a map with string keys")
	}
	return json.Marshal(s)
}

// outputSchema infers the schema of a tool's value; nil when it would
// accept anything.
func outputSchema(t reflect.Type, types map[reflect.Type]*jsonschema.Schema) (json.RawMessage, error) {
	s, err := inferSchema(t, types)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if string(b) == "true" || string(b) == "{}" {
		return nil, nil
	}
	return b, nil
}

func inferSchema(t reflect.Type, types map[reflect.Type]*jsonschema.Schema) (*jsonschema.Schema, error) {
	all := maps.Clone(goTypeSchemas)
	maps.Copy(all, types)
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: all})
	if err != nil {
		return nil, err
	}
	admitNull(s)
	return s, nil
}

// admitNull makes every schema accept null where encoding/json writes one
// (and decodes one into a nil value). jsonschema-go already does so for
// pointers and slices, but not for maps (the object schema with
// additionalProperties that are not false, a struct's, and no properties),
// and a pointer to an Enum type gets "null" among its types but not among
// its values.
func admitNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "object" && s.Properties == nil && s.AdditionalProperties != nil && !isFalse(s.AdditionalProperties) {
		s.Type, s.Types = "", []string{"null", "object"}
	}
	// A pointer to a type whose schema is "any JSON value" (json.RawMessage,
	// any) comes out as null alone: no Go type encodes as null only, so it
	// is any value again.
	if slices.Equal(s.Types, []string{"null"}) {
		s.Types = nil
	}
	if s.Enum != nil && slices.Contains(s.Types, "null") && !slices.Contains(s.Enum, nil) {
		s.Enum = append(slices.Clip(s.Enum), nil)
	}
	for _, p := range s.Properties {
		admitNull(p)
	}
	admitNull(s.Items)
	admitNull(s.AdditionalProperties)
}

// isFalse reports whether s is the schema that accepts nothing, which
// jsonschema-go writes as false.
func isFalse(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}
