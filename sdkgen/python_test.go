package sdkgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestPythonStub_golden(t *testing.T) {
	out, err := PythonStub(loadTools(t, "python.json"))
	require.NoError(t, err)
	golden(t, "python.golden", out)
}

// pyField renders one property schema as the field x of tool t's arguments and returns the
// field's line (type and trailing comment) and the whole stub.
func pyFieldOf(t *testing.T, schema string) (string, string) {
	t.Helper()
	in := `{"type":"object","properties":{"x":` + schema + `},"required":["x"],"additionalProperties":false}`
	out, err := PythonStub([]api.Schema{{Name: "t", InputSchema: json.RawMessage(in)}})
	require.NoError(t, err)
	_, after, ok := strings.Cut(out, "class TArgs(TypedDict, closed=True):\n    x: ")
	require.True(t, ok, out)
	line, _, _ := strings.Cut(after, "\n")
	return line, out
}

func TestPythonStub_mappings(t *testing.T) {
	t.Parallel()
	tests := []struct{ schema, want string }{
		{`{"type":"string"}`, "str"},
		{`{"type":"integer"}`, "int"},
		{`{"type":"number"}`, "float"},
		{`{"type":"boolean"}`, "bool"},
		{`{"type":"null"}`, "None"},
		{`{"type":["string","null"]}`, "str | None"},
		{`{}`, "JsonValue"},
		{`true`, "JsonValue"},
		{`false`, "Never"},
		{`{"type":"array","items":{"type":"string"}}`, "list[str]"},
		{`{"type":"array"}`, "list[JsonValue]"},
		{`{"type":"array","items":false}`, "list[Never]"},
		{`{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`, "list[str | int]"},
		{`{"enum":["a","b"]}`, `Literal["a", "b"]`},
		{`{"enum":["a",1,true,null,1.5,[1],{"k":1}]}`, `Literal["a", 1, True] | None | float | list[JsonValue] | dict[str, JsonValue]`},
		{`{"type":"string","enum":["a",1]}`, `Literal["a"]`},
		{`{"const":"only"}`, `Literal["only"]`},
		{`{"const":5,"type":"string"}`, "Never"},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, "str | int"},
		{`{"oneOf":[{"const":"a"},{"const":"b"},{"type":"null"}]}`, `Literal["a", "b"] | None`},
		{`{"anyOf":[{"type":"string"},{}]}`, "JsonValue"},
		{`{"type":"object"}`, "dict[str, JsonValue]"},
		{`{"type":"object","additionalProperties":{"type":"integer"}}`, "dict[str, int]"},
		{`{"type":"object","additionalProperties":false}`, "dict[str, Never]"},
		{`{"type":"object","additionalProperties":false,"patternProperties":{"^a":{"type":"string"},"^b":{"type":"integer"}}}`, "dict[str, str | int]"},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, "TArgsX"},
		{`{"type":"foo"}`, `Any  # unsupported type "foo"`},
		{`{"$ref":"https://example.com/s.json"}`, "Any  # non-local $ref https://example.com/s.json"},
		{`{"$ref":"#/nope"}`, "Any  # unresolved $ref #/nope"},
		{`{"enum":"x"}`, "Any  # enum is not an array"},
		{`{"allOf":[{"type":"string"},{"minLength":1}]}`, "str"},
		{`{"allOf":[{"type":"string"},{"type":"integer"}]}`, "str  # all of 2 schemas: only the first is typed"},
		{`{"type":"array","items":{"type":"foo"}}`, `list[Any]  # unsupported type "foo"`},
	}
	for _, tc := range tests {
		got, out := pyFieldOf(t, tc.schema)
		require.Equal(t, tc.want, got, "%s:\n%s", tc.schema, out)
	}
}

// An enum longer than maxEnumMembers widens to its members' base types and says so.
func TestPythonStub_hugeEnum(t *testing.T) {
	t.Parallel()
	vals := make([]string, maxEnumMembers+1)
	for i := range vals {
		vals[i] = fmt.Sprintf("%q", fmt.Sprint("v", i))
	}
	got, _ := pyFieldOf(t, `{"enum":[`+strings.Join(vals, ",")+`,7]}`)
	require.Equal(t, "str | int  # one of 202 allowed values", got)
}

// Nested objects become TypedDicts named after their path; deep nesting stops at maxDepth with
// a comment, and names stay bounded by maxPyName.
func TestPythonStub_nesting(t *testing.T) {
	t.Parallel()
	schema := `{"type":"string"}`
	for i := 0; i < 3*maxDepth; i++ {
		schema = `{"type":"object","properties":{"level_name":` + schema + `},"required":["level_name"]}`
	}
	out, err := PythonStub([]api.Schema{{Name: "deep", InputSchema: json.RawMessage(schema)}})
	require.NoError(t, err)
	require.Contains(t, out, "class DeepArgsLevelName(TypedDict, extra_items=JsonValue):\n    level_name: DeepArgsLevelNameLevelName\n")
	require.Contains(t, out, "Any  # schema nested too deeply")
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "class "); ok {
			name, _, _ = strings.Cut(name, "(")
			require.LessOrEqual(t, len(name), maxPyName+3, line)
		}
	}
	require.NoError(t, checkPyWellFormed(out))
}

// Tools sort by name: the order they come in does not change the text.
func TestPythonStub_deterministic(t *testing.T) {
	t.Parallel()
	tools := loadTools(t, "python.json")
	want, err := PythonStub(tools)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		r.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
		got, err := PythonStub(tools)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

func TestPythonStub_errors(t *testing.T) {
	t.Parallel()
	obj := json.RawMessage(`{"type":"object"}`)
	for _, tc := range []struct {
		tools []api.Schema
		want  string
	}{
		{[]api.Schema{{Name: "", InputSchema: obj}}, "a tool has an empty name"},
		{[]api.Schema{{Name: "a", InputSchema: obj}, {Name: "a", InputSchema: obj}}, `two tools are named "a"`},
		{[]api.Schema{{Name: "\xff", InputSchema: obj}}, "not valid UTF-8"},
		{[]api.Schema{{Name: "a", InputSchema: json.RawMessage(`{"type":`)}}, `tool "a": input schema`},
		{[]api.Schema{{Name: "a", InputSchema: json.RawMessage(`[1]`)}}, "not a JSON Schema"},
		{[]api.Schema{{Name: "a", InputSchema: obj, OutputSchema: json.RawMessage(`"x"`)}}, `tool "a": output schema`},
	} {
		_, err := PythonStub(tc.tools)
		require.ErrorContains(t, err, tc.want)
	}
	// The transport is left out; no tools at all is a stub with no methods.
	out, err := PythonStub([]api.Schema{{Name: "run_code", InputSchema: obj, Transport: true}})
	require.NoError(t, err)
	require.NotContains(t, out, "run_code(")
	require.Contains(t, out, "type ToolName = Never\n")
	require.Contains(t, out, "def __getitem__(self, name: Never) -> AnyTool: ...\n")
}

// Every odd schema renders (what Python cannot say as Any with a reason), never panics, and is
// well-formed; pyright checks the same files in TestPythonStub_pyright.
func TestPythonStub_oddSchemas(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"tools.json", "odd.json", "python.json"} {
		out, err := PythonStub(loadTools(t, file))
		require.NoError(t, err, file)
		require.NoError(t, checkPyWellFormed(out), "%s:\n%s", file, out)
	}
}

func TestPyNameAndQuote(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{"read": true, "_x": true, "A1": true, "match": true, "type": true,
		"class": false, "None": false, "1a": false, "a-b": false, "a.b": false, "": false, "日本": false,
		"__getitem__": false, "__x": true, "____": true, "$x": false} {
		require.Equal(t, want, pyName(s), s)
	}
	require.Equal(t, `"a\"b\\c\n\t\x00\x7f\u2028😀"`, pyQuote("a\"b\\c\n\t\x00\x7f\u2028😀"))
	require.Equal(t, `"\ufffd"`, pyQuote("\xff")[:0]+`"\ufffd"`)
	require.Equal(t, "\"\uFFFD\"", pyQuote("\xff"))
	require.Equal(t, "# a b */", pyComment("a\n\tb */\x01"))
	require.Equal(t, "", pyComment(" \n"))
}

// checkPyWellFormed is the fuzz target's cheap stand-in for a Python parser (pyright checks the
// corpus in TestPythonStub_pyright): valid UTF-8 ending in a newline, no control character but
// newlines, every string literal closes on its line with valid escapes, comments run to the end
// of the line, and (), [] and {} nest correctly outside them.
func checkPyWellFormed(py string) error {
	if !utf8.ValidString(py) {
		return errors.New("invalid UTF-8")
	}
	if !strings.HasSuffix(py, "\n") {
		return errors.New("does not end with a newline")
	}
	var stack []byte
	closing := map[byte]byte{')': '(', ']': '[', '}': '{'}
	for lineNo, line := range strings.Split(strings.TrimSuffix(py, "\n"), "\n") {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s: %q", lineNo+1, fmt.Sprintf(format, args...), line)
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case c < 0x20 || c == 0x7f:
				return fail("control character %#x", c)
			case c == '\'':
				return fail("single-quoted string")
			case c == '"':
				end, err := pyStringEnd(line, i)
				if err != nil {
					return fail("%v", err)
				}
				i = end
			case c == '#':
				i = len(line)
			case c == '(' || c == '[' || c == '{':
				stack = append(stack, c)
			case c == ')' || c == ']' || c == '}':
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

func pyStringEnd(line string, i int) (int, error) {
	hexes := func(j, n int) bool {
		return j+n <= len(line) && strings.Trim(line[j:j+n], "0123456789abcdefABCDEF") == ""
	}
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
			case 'x':
				if !hexes(j+2, 2) {
					return 0, errors.New(`bad \x escape`)
				}
				j += 3
			case 'u':
				if !hexes(j+2, 4) {
					return 0, errors.New(`bad \u escape`)
				}
				j += 5
			case 'U':
				if !hexes(j+2, 8) {
					return 0, errors.New(`bad \U escape`)
				}
				j += 9
			default:
				return 0, fmt.Errorf("unexpected escape \\%c", e)
			}
		}
	}
	return 0, errors.New("string not closed on its line")
}

// pyStubBound is the most text PythonStub may render for tools whose names and schemas total n
// bytes: linear in the input, whatever its shape.
func pyStubBound(n int) int { return 8192 + 48*n }

// FuzzPythonStub feeds arbitrary tool names and JSON Schemas to the Python renderer: it must never
// panic, and whatever it renders must be well-formed and within pyStubBound.
func FuzzPythonStub(f *testing.F) {
	for _, file := range []string{"tools.json", "odd.json", "python.json"} {
		for _, tool := range loadTools(f, file) {
			f.Add(tool.Name, []byte(tool.InputSchema))
			if tool.OutputSchema != nil {
				f.Add(tool.Name, []byte(tool.OutputSchema))
			}
		}
	}
	f.Add("x", []byte(`{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"$ref":"#"},{"$ref":"#/$defs/a"}]}}}`))
	f.Add("a.b", []byte(`{"properties":{"":{},"self":{"properties":{"a":{"properties":{"a":{}}}}}},"required":[""]}`))
	f.Add("", []byte(`{}`))
	f.Add("bad", []byte(`{"type":`))
	f.Fuzz(func(t *testing.T, name string, schema []byte) {
		tools := []api.Schema{
			{Name: name, Description: name, InputSchema: schema, OutputSchema: schema},
			{Name: "bash", InputSchema: schema},
			{Name: name + ".x", InputSchema: schema},
		}
		out, err := PythonStub(tools)
		if err != nil {
			return
		}
		require.NoError(t, checkPyWellFormed(out), out)
		n := 3*len(name) + 4*len(schema) + 8
		require.LessOrEqual(t, len(out), pyStubBound(n), "%d bytes of input", n)
	})
}

// BenchmarkRender renders testdata/tools.json's tools as TypeScript declarations and as the
// Python stub, side by side.
func BenchmarkRender(b *testing.B) {
	tools := loadTools(b, "tools.json")
	for _, lang := range []struct {
		name   string
		render func([]api.Schema) (string, error)
	}{{"typescript", Declarations}, {"python", PythonStub}} {
		b.Run(lang.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := lang.render(tools); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
