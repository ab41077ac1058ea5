package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/regexbound"
)

// schemaURL is the name a compiled schema is known by inside its compiler.
// Every schema gets its own compiler, so the name never collides.
const schemaURL = "urn:ptcx:schema"

// compileSchema compiles one JSON Schema. Remote references are refused: the
// registry never touches the network or the file system. Any problem is an
// UNSUPPORTED_SCHEMA error naming what (input or output schema) failed.
func compileSchema(what string, raw json.RawMessage, wantObject bool) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &api.Error{Code: api.CodeUnsupportedSchema, Message: fmt.Sprintf("%s is not valid JSON: %v", what, err), Cause: err}
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, api.Errorf(api.CodeUnsupportedSchema, "%s must be a JSON object, got %s", what, jsonKind(doc))
	}
	if wantObject {
		if t, ok := m["type"]; !ok || t != "object" {
			return nil, api.Errorf(api.CodeUnsupportedSchema, `%s must declare "type": "object" (tool arguments are a JSON object)`, what)
		}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no scheme is loadable: no remote $ref
	var compiled atomic.Bool
	c.UseRegexpEngine(func(expr string) (jsonschema.Regexp, error) { return compileRegexp(expr, compiled.Load()) })
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, &api.Error{Code: api.CodeUnsupportedSchema, Message: fmt.Sprintf("%s: %v", what, err), Cause: err}
	}
	s, err := c.Compile(schemaURL)
	compiled.Store(true)
	if err != nil {
		return nil, &api.Error{Code: api.CodeUnsupportedSchema, Message: fmt.Sprintf("%s cannot be compiled: %s", what, oneLine(err.Error())), Cause: err}
	}
	return s, nil
}

// compileRegexp is a schema's regular expression engine. While the schema
// compiles (bounded false) it compiles the schema's own expressions
// ("pattern", "patternProperties", and those of the meta-schemas) as Go's
// regexp does: a registered tool's schema is trusted (docs/security.md),
// and ptcx serve bounds its clients' before they get here. Once the schema
// is compiled, an expression it is asked for is a value being validated
// ("format": "regex", asserted by drafts before 2019-09; or a value checked
// against a meta-schema through $ref): a program's argument or a tool's
// output, never trusted, so it is held to internal/regexbound's bounds
// (the value then fails validation, saying why).
func compileRegexp(expr string, bounded bool) (jsonschema.Regexp, error) {
	if bounded {
		if _, _, err := regexbound.Parse(expr, syntax.Perl); err != nil {
			return nil, err
		}
	}
	return regexp.Compile(expr)
}

// parseJSON decodes raw keeping number precision, as the validator wants:
// exactly what encoding/json's Decoder with UseNumber returns, more cheaply
// (decodeValid), since it runs for every call's arguments. Unless dups is
// true, an object with a key twice is an error (a *duplicateKey).
func parseJSON(raw json.RawMessage, dups bool) (any, error) {
	if json.Valid(raw) {
		v, dup := decodeValid(raw, dups)
		if dup != nil {
			return nil, dup
		}
		return v, nil
	}
	// The Decoder's error says what is wrong where.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return nil, errors.New("invalid JSON")
}

// ParseArgs checks that raw is one JSON object, in which no object has a
// key twice, and returns it decoded. Empty raw means {}. Anything else is
// INVALID_ARGS.
func ParseArgs(raw json.RawMessage) (map[string]any, *api.Error) {
	var a Args
	if err := ReadArgs(raw, &a); err != nil {
		return nil, err
	}
	return a.Map(), nil
}

// parseArgs is ParseArgs the general way: decode, then look at what it is.
func parseArgs(raw json.RawMessage) (map[string]any, *api.Error) {
	v, err := parseJSON(raw, false)
	if dup, ok := err.(*duplicateKey); ok {
		return nil, &api.Error{Code: api.CodeInvalidArgs,
			Message:    "arguments have a duplicate key: " + dup.Error() + "; a key may appear only once in an object",
			Violations: []string{dup.violation()}}
	}
	if err != nil {
		return nil, &api.Error{Code: api.CodeInvalidArgs, Message: fmt.Sprintf("arguments are not valid JSON: %v", err), Cause: err}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, api.Errorf(api.CodeInvalidArgs, "arguments must be a JSON object, got %s", jsonKind(v))
	}
	return m, nil
}

// validate checks v against s and lists every violation.
func validate(s *jsonschema.Schema, v any, code api.Code, what string) *api.Error {
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &api.Error{Code: code, Message: fmt.Sprintf("%s could not be validated: %v", what, err), Cause: err}
	}
	vs := violations(ve)
	msg := fmt.Sprintf("%s do not match the schema: %s", what, strings.Join(vs, "; "))
	if len(vs) == 1 {
		msg = fmt.Sprintf("%s does not match the schema: %s", what, vs[0])
	}
	return &api.Error{Code: code, Message: msg, Violations: vs}
}

var printer = message.NewPrinter(language.English)

// violations flattens a validation error tree into its leaves, one line each,
// sorted and without repeats.
func violations(ve *jsonschema.ValidationError) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		line := fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(printer))
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	walk(ve)
	sort.Strings(out)
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
