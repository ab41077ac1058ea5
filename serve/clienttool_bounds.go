package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"

	"github.com/ptcx/ptcx/internal/regexbound"
	"github.com/ptcx/ptcx/internal/text"
)

// Bounds on what a client sends that the server works on beyond reading
// it (docs/security.md, "ptcx serve's requests"): a client tool's schemas,
// which the server compiles (JSON Schema, with Go's regexp for their
// expressions), and a tool result's value, which the server validates
// against its tool's output_schema and the program decodes. Unlike a
// registered tool's schema, which its host trusts, these come from any
// client with a key; each is refused with 400 naming the field.
const (
	// MaxClientSchemaBytes bounds each of a client tool's input_schema and
	// output_schema, in bytes: a generous hand-written schema is a few KiB.
	MaxClientSchemaBytes = 64 << 10
	// MaxJSONDepth bounds how deeply a client tool's schema and a tool
	// result's value nest (arrays and objects). The JSON Schema validator
	// keeps each error's whole path, so a value failing its schema at every
	// level costs the square of its depth (4,000 levels: 5.5 s); real data
	// nests a few tens of levels (a program's own results: at most 200).
	MaxJSONDepth = 128
	// maxClientRegexpSize bounds the regular expressions of one request's
	// client tools together, in instructions with repetitions expanded
	// (internal/regexbound.Size): 32 expressions of the most each may be.
	// Each expression is also within regexbound's own bounds.
	maxClientRegexpSize = 32 * regexbound.MaxSize
)

// checkClientTools checks a request's client tools' schemas within the
// bounds: each schema's size and depth, and every regular expression the
// JSON Schema library would compile from it (a "pattern" string and the
// keys of a "patternProperties" object, wherever they are: a superset of
// where the library looks) within regexbound's bounds, all of them
// together within maxClientRegexpSize. A schema that is otherwise wrong is
// left to the registry, which compiles it.
func checkClientTools(tools []ClientTool) error {
	budget := 0
	for i, t := range tools {
		for _, s := range []struct {
			field string
			raw   json.RawMessage
		}{{"input_schema", t.InputSchema}, {"output_schema", t.OutputSchema}} {
			if len(s.raw) == 0 {
				continue
			}
			place := fmt.Sprintf("client_tools[%d].%s", i, s.field)
			if len(s.raw) > MaxClientSchemaBytes {
				return fmt.Errorf("field %s: the schema is %d bytes, over the maximum of %d a client tool's schema may be", place, len(s.raw), MaxClientSchemaBytes)
			}
			if at, deep := tooDeep(s.raw, MaxJSONDepth); deep {
				return fmt.Errorf("field %s: the schema nests deeper than %d levels (at byte %d), the maximum", place, MaxJSONDepth, at)
			}
			var doc any
			if err := json.Unmarshal(s.raw, &doc); err != nil {
				return fmt.Errorf("field %s: %w", place, err)
			}
			w := schemaWalk{path: []string{place}, budget: &budget}
			if err := w.walk(doc); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkToolResult checks results[i] of a tool_results body: its value
// nests at most MaxJSONDepth levels.
func checkToolResult(i int, r ToolResult) error {
	if at, deep := tooDeep(r.Value, MaxJSONDepth); deep {
		return fmt.Errorf("field results[%d].value: the value nests deeper than %d levels (at byte %d of it), the maximum; flatten it", i, MaxJSONDepth, at)
	}
	return nil
}

// tooDeep reports whether the JSON text data (valid: decoded before) nests
// arrays and objects more than limit deep, and the offset of the first
// bracket past it. It reads data once and allocates nothing.
func tooDeep(data []byte, limit int) (int, bool) {
	depth, inString, escaped := 0, false, false
	for i, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return i, true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return 0, false
}

// schemaWalk visits a decoded client tool schema (at most MaxJSONDepth
// deep, so the recursion is bounded) for its regular expressions. path is
// the place of the value being visited, joined only for a message.
type schemaWalk struct {
	path   []string
	budget *int // instructions of the request's expressions so far
}

func (w *schemaWalk) walk(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			w.path = append(w.path, placeOfKey(k))
			if err := w.visitMember(k, v[k]); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
	case []any:
		for i, e := range v {
			w.path = append(w.path, "["+strconv.Itoa(i)+"]")
			if err := w.walk(e); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
	}
	return nil
}

// visitMember visits the value of key k, its place on w.path.
func (w *schemaWalk) visitMember(k string, v any) error {
	switch val := v.(type) {
	case string:
		if k == "pattern" {
			return w.regexp(val, "")
		}
	case map[string]any:
		if k == "patternProperties" {
			for _, p := range sortedKeys(val) {
				if err := w.regexp(p, placeOfKey(p)); err != nil {
					return err
				}
			}
		}
	}
	return w.walk(v)
}

// regexp checks expr, found at w.path and then suffix.
func (w *schemaWalk) regexp(expr, suffix string) error {
	_, n, err := regexbound.Parse(expr, syntax.Perl)
	switch {
	case errors.Is(err, regexbound.ErrTooLong):
		return fmt.Errorf("field %s%s: the regular expression is %d bytes, over the maximum of %d a client tool's may be", strings.Join(w.path, ""), suffix, len(expr), regexbound.MaxPatternBytes)
	case errors.Is(err, regexbound.ErrTooLarge):
		return fmt.Errorf("field %s%s: the regular expression %q is too large: with its repetitions expanded it is more than %d instructions, the maximum a client tool's may be; use smaller repetition counts (x{1000} counts 1000) or a shorter expression",
			strings.Join(w.path, ""), suffix, text.ShortenRunes(expr, 80), regexbound.MaxSize)
	case err != nil:
		return nil // not an expression: the registry's compile says so, if it is one
	}
	if *w.budget += n; *w.budget > maxClientRegexpSize {
		return fmt.Errorf("field %s%s: the client tools' regular expressions come to more than %d instructions together (with repetitions expanded), the maximum for one request", strings.Join(w.path, ""), suffix, maxClientRegexpSize)
	}
	return nil
}

// placeOfKey is the place of key k below its object: ".k" for a plain name,
// else `["k"]`.
func placeOfKey(k string) string {
	plain := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return "." + k
	}
	return "[" + strconv.Quote(text.ShortenRunes(k, 80)) + "]"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
