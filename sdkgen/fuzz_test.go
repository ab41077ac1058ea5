package sdkgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// checkWellFormed is the fuzz target's cheap stand-in for a TypeScript parser (tsc checks the
// corpus in the regular tests): the text is valid UTF-8, ends in a newline, has no control
// character but newlines, every string literal and comment closes on its own line, string
// escapes are valid, and (), [], {} and <> nest correctly outside strings and comments.
func checkWellFormed(ts string) error {
	if !utf8.ValidString(ts) {
		return errors.New("invalid UTF-8")
	}
	if strings.ContainsAny(ts, "\u2028\u2029") {
		return errors.New("contains a JavaScript line separator (U+2028 or U+2029)")
	}
	if !strings.HasSuffix(ts, "\n") {
		return errors.New("does not end with a newline")
	}
	var stack []byte
	closing := map[byte]byte{')': '(', ']': '[', '}': '{', '>': '<'}
	for lineNo, line := range strings.Split(strings.TrimSuffix(ts, "\n"), "\n") {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s: %q", lineNo+1, fmt.Sprintf(format, args...), line)
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case c < 0x20 || c == 0x7f:
				return fail("control character %#x", c)
			case c == '"':
				end, err := stringEnd(line, i)
				if err != nil {
					return fail("%v", err)
				}
				i = end
			case strings.HasPrefix(line[i:], "//"):
				i = len(line)
			case strings.HasPrefix(line[i:], "/*"):
				end := strings.Index(line[i+2:], "*/")
				if end < 0 {
					return fail("comment not closed on its line")
				}
				i += end + 3
			case strings.HasPrefix(line[i:], "=>"):
				i++
			case c == '(' || c == '[' || c == '{' || c == '<':
				stack = append(stack, c)
			case c == ')' || c == ']' || c == '}' || c == '>':
				if len(stack) == 0 || stack[len(stack)-1] != closing[c] {
					return fail("unbalanced %q", c)
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %q", stack)
	}
	return nil
}

// stringEnd returns the index of the quote that closes the string literal starting at line[i].
func stringEnd(line string, i int) (int, error) {
	for j := i + 1; j < len(line); j++ {
		switch c := line[j]; {
		case c < 0x20 || c == 0x7f:
			return 0, fmt.Errorf("control character %#x in a string", c)
		case c == '"':
			return j, nil
		case c == '\\':
			if j+1 >= len(line) {
				return 0, errors.New("escape at end of line")
			}
			switch e := line[j+1]; e {
			case '"', '\\', 'n', 'r', 't':
				j++
			case 'u':
				if j+6 > len(line) || strings.Trim(line[j+2:j+6], "0123456789abcdefABCDEF") != "" {
					return 0, errors.New("bad \\u escape")
				}
				j += 5
			default:
				return 0, fmt.Errorf("unexpected escape \\%c", e)
			}
		}
	}
	return 0, errors.New("string not closed on its line")
}

func TestCheckWellFormed(t *testing.T) {
	tests := []struct {
		name, ts string
		ok       bool
	}{
		{"simple", "type A = { a: string; b: (string | number)[] };\n", true},
		{"generics and arrows", "declare function f(cb: () => void): Promise<Record<string, X>>;\n", true},
		{"brackets in strings and comments", "type A = \"{[(<\" /* }])> */; // )\n", true},
		{"escapes", "type A = \"\\\"\\\\\\n\\u2028\";\n", true},
		{"no final newline", "type A = string;", false},
		{"unbalanced", "type A = { a: string;\n", false},
		{"mismatched", "type A = (string];\n", false},
		{"string across lines", "type A = \"a\nb\";\n", false},
		{"comment across lines", "/** a\n b */\n", false},
		{"control character", "type A = \"\x01\";\n", false},
		{"bad escape", "type A = \"\\x41\";\n", false},
		{"short unicode escape", "type A = \"\\u12\";\n", false},
		{"invalid UTF-8", "type A = \"\xff\";\n", false},
		{"line separator", "/** a \u2028 b */\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkWellFormed(tc.ts)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

// FuzzDeclarations feeds arbitrary tool names and JSON Schemas to the renderer: it must never
// panic, and whatever it renders must be well-formed, and so must the SDK section and the route
// example.
func FuzzDeclarations(f *testing.F) {
	for _, file := range []string{"tools.json", "odd.json"} {
		for _, tool := range loadTools(f, file) {
			f.Add(tool.Name, []byte(tool.InputSchema))
			if tool.OutputSchema != nil {
				f.Add(tool.Name, []byte(tool.OutputSchema))
			}
		}
	}
	f.Add("x", []byte(`{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"$ref":"#"},{"$ref":"#/$defs/a"}]}}}`))
	f.Add("", []byte(`{}`))
	f.Add("bad", []byte(`{"type":`))
	f.Fuzz(func(t *testing.T, name string, schema []byte) {
		tool := api.Schema{Name: name, Description: name, InputSchema: schema, OutputSchema: schema}
		example := RouteExample(tool)
		require.NotContains(t, example, "\n")
		require.True(t, json.Valid([]byte(strings.TrimPrefix(example, "run_code "))), example)

		out, err := Declarations([]api.Schema{tool, {Name: "bash", InputSchema: schema}})
		if err != nil {
			return
		}
		require.NoError(t, checkWellFormed(out), out)
		sdk, err := SDKSection(api.ModePTC, []api.Schema{tool})
		require.NoError(t, err)
		require.Contains(t, sdk, "```ts\n")

		// The catalog of a large set holding the tool renders whatever Declarations renders.
		entries, err := Catalog([]api.Schema{tool, {Name: name + ".x", InputSchema: schema}, {Name: "a." + name, InputSchema: schema}})
		if name == "" || strings.HasPrefix(name, "a.") {
			return // an empty name, or two tools of one name
		}
		require.NoError(t, err)
		for _, e := range entries {
			require.NoError(t, checkWellFormed(e.Declaration), e.Declaration)
			require.LessOrEqual(t, len(e.Summary), SummaryBytes)
			require.NotContains(t, e.Summary, "\n")
		}
	})
}
