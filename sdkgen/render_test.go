package sdkgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// renderInput renders schema as the input schema of a tool named "x" and returns every named type
// it produced, root first, as "Name = body" lines.
func renderInput(t *testing.T, schema string) []string {
	t.Helper()
	decls, _, err := compile([]api.Schema{{Name: "x", InputSchema: json.RawMessage(schema)}})
	require.NoError(t, err)
	var out []string
	for _, nt := range decls[0].args.order {
		out = append(out, nt.name+" = "+nt.body.text)
	}
	return out
}

func TestDeclarations_mapping(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []string
	}{
		{"string", `{"type":"string"}`, []string{"XArgs = string"}},
		{"integer is number", `{"type":"integer"}`, []string{"XArgs = number"}},
		{"number", `{"type":"number"}`, []string{"XArgs = number"}},
		{"boolean", `{"type":"boolean"}`, []string{"XArgs = boolean"}},
		{"null", `{"type":"null"}`, []string{"XArgs = null"}},
		{"no type", `{"description":"anything"}`, []string{"XArgs = JsonValue"}},
		{"true", `true`, []string{"XArgs = JsonValue"}},
		{"false", `false`, []string{"XArgs = never"}},
		{"type array", `{"type":["string","integer","number"]}`, []string{"XArgs = string | number"}},
		{"nullable type array", `{"type":["string","null"]}`, []string{"XArgs = string | null"}},
		{"openapi nullable is not JSON Schema", `{"type":"boolean","nullable":true}`, []string{"XArgs = boolean"}},
		{"array", `{"type":"array","items":{"type":"string"}}`, []string{"XArgs = string[]"}},
		{"array of union", `{"type":"array","items":{"type":["string","number"]}}`, []string{"XArgs = (string | number)[]"}},
		{"array without items", `{"type":"array"}`, []string{"XArgs = JsonValue[]"}},
		{"array of negative literal", `{"type":"array","items":{"const":-1}}`, []string{"XArgs = (-1)[]"}},
		{"closed tuple", `{"prefixItems":[{"type":"string"},{"type":"number"}],"items":false,"minItems":2}`,
			[]string{"XArgs = [string, number]"}},
		{"optional tuple elements and rest", `{"prefixItems":[{"type":"string"},{"type":["number","null"]}],"items":{"type":"boolean"},"minItems":1}`,
			[]string{"XArgs = [string, (number | null)?, ...boolean[]]"}},
		{"draft-07 tuple", `{"type":"array","items":[{"type":"string"}],"additionalItems":false}`, []string{"XArgs = [string?]"}},
		{"tuple closed by maxItems", `{"prefixItems":[{"type":"string"}],"minItems":1,"maxItems":1}`, []string{"XArgs = [string]"}},
		{"closed object", `{"type":"object","properties":{"a":{"type":"string","description":"The a."},"b":{"type":"integer"}},"required":["a"],"additionalProperties":false}`,
			[]string{"XArgs = {\n  /** The a. */\n  a: string;\n  b?: number;\n}"}},
		{"open object", `{"type":"object","properties":{"a":{"type":"string"}}}`,
			[]string{"XArgs = {\n  a?: string;\n} & Record<string, JsonValue>"}},
		{"open empty object", `{"type":"object"}`, []string{"XArgs = Record<string, JsonValue>"}},
		{"closed empty object", `{"type":"object","additionalProperties":false}`, []string{"XArgs = Record<string, never>"}},
		{"map", `{"type":"object","additionalProperties":{"type":"integer"}}`, []string{"XArgs = { [key: string]: number }"}},
		{"properties and index signature", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"boolean"}}`,
			[]string{"XArgs = {\n  a?: string;\n  [key: string]: boolean | string | undefined;\n}"}},
		{"index signature too long for a union", `{"type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"string"}}}},"additionalProperties":{"type":"integer"}}`,
			[]string{"XArgs = {\n  o?: {\n    p?: string;\n  } & Record<string, JsonValue>;\n  [key: string]: unknown /* other keys: number */;\n}"}},
		{"required property not listed", `{"type":"object","required":["k"],"additionalProperties":false}`,
			[]string{"XArgs = {\n  k: JsonValue;\n}"}},
		{"implied object", `{"properties":{"a":{"type":"null"}},"required":["a"]}`,
			[]string{"XArgs = {\n  a: null;\n} & Record<string, JsonValue>"}},
		{"nested object indents", `{"type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"string"}},"additionalProperties":false}},"additionalProperties":false}`,
			[]string{"XArgs = {\n  o?: {\n    p?: string;\n  };\n}"}},
		{"quoted names", `{"type":"object","properties":{"class":{"type":"string"},"a-b":{"type":"string"},"q\"*/\n":{"type":"string"}},"additionalProperties":false}`,
			[]string{"XArgs = {\n  class?: string;\n  \"a-b\"?: string;\n  \"q\\\"*/\\n\"?: string;\n}"}},
		{"enum", `{"enum":["a",1,true,null,{"k":"v"},[1]]}`, []string{`XArgs = "a" | 1 | true | null | { k: "v" } | [1]`}},
		{"enum filtered by type", `{"type":"string","enum":["a",1]}`, []string{`XArgs = "a"`}},
		{"const", `{"const":"only"}`, []string{`XArgs = "only"`}},
		{"const of the wrong type", `{"type":"number","const":"only"}`, []string{`XArgs = never`}},
		{"oneOf", `{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}`, []string{"XArgs = string | string[]"}},
		{"anyOf", `{"anyOf":[{"const":1},{"const":2}]}`, []string{"XArgs = 1 | 2"}},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false},{"type":"object","properties":{"b":{"type":"string"}},"additionalProperties":false}]}`,
			[]string{"XArgs = {\n  a?: string;\n} & {\n  b?: string;\n}"}},
		{"allOf with union", `{"allOf":[{"type":"string"},{"anyOf":[{"const":"a"},{"const":"b"}]}]}`, []string{`XArgs = string & ("a" | "b")`}},
		{"local ref", `{"$ref":"#/$defs/Name","$defs":{"Name":{"type":"string"}}}`, []string{"XArgs = XName", "XName = string"}},
		{"draft-07 definitions", `{"$ref":"#/definitions/my-name","definitions":{"my-name":{"type":"integer"}}}`,
			[]string{"XArgs = XMyName", "XMyName = number"}},
		{"recursive ref", `{"$defs":{"L":{"type":"object","properties":{"next":{"$ref":"#/$defs/L"}},"additionalProperties":false}},"$ref":"#/$defs/L"}`,
			[]string{"XArgs = XL", "XL = {\n  next?: XL;\n}"}},
		{"root ref", `{"type":"array","items":{"$ref":"#"}}`, []string{"XArgs = XArgs[]"}},
		{"direct cycle is broken", `{"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/B"},{"type":"string"}]},"B":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"number"}]}},"$ref":"#/$defs/A"}`,
			[]string{"XArgs = XA", "XA = XB | string", "XB = unknown /* circular $ref #/$defs/A */ | number"}},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, []string{"XArgs = unknown /* non-local $ref https://example.com/s.json */"}},
		{"unresolved ref", `{"$ref":"#/$defs/none"}`, []string{"XArgs = unknown /* unresolved $ref #/$defs/none */"}},
		{"unsupported type", `{"type":"date"}`, []string{`XArgs = unknown /* unsupported type "date" */`}},
		{"too deep", strings.Repeat(`{"type":"array","items":`, 40) + `{}` + strings.Repeat(`}`, 40),
			[]string{"XArgs = unknown /* schema nested too deeply */" + strings.Repeat("[]", 33)}},
		{"huge enum", `{"enum":[` + strings.TrimSuffix(strings.Repeat(`"v",1,`, 101), ",") + `]}`,
			[]string{"XArgs = number | string /* one of 202 allowed values */"}},
		{"enum at the cap", `{"enum":[` + strings.TrimSuffix(strings.Repeat(`"v",`, 200), ",") + `]}`, []string{`XArgs = "v"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, renderInput(t, tc.schema))
		})
	}
}

func TestDeclarations_errors(t *testing.T) {
	tests := []struct {
		name  string
		tools []api.Schema
		want  string
	}{
		{"empty name", []api.Schema{{Name: ""}}, "empty name"},
		{"invalid UTF-8 name", []api.Schema{{Name: "a\xff"}}, "not valid UTF-8"},
		{"duplicate names", []api.Schema{{Name: "a"}, {Name: "b"}, {Name: "a"}}, `two tools are named "a"`},
		{"invalid JSON input", []api.Schema{{Name: "a", InputSchema: json.RawMessage(`{"type":`)}}, `tool "a": input schema`},
		{"trailing data", []api.Schema{{Name: "a", InputSchema: json.RawMessage(`{} {}`)}}, `tool "a": input schema`},
		{"not a schema", []api.Schema{{Name: "a", InputSchema: json.RawMessage(`"string"`)}}, "not a JSON Schema"},
		{"invalid JSON output", []api.Schema{{Name: "a", OutputSchema: json.RawMessage(`[`)}}, `tool "a": output schema`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Declarations(tc.tools)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestDeclarations_absentSchemas(t *testing.T) {
	for _, raw := range []json.RawMessage{nil, json.RawMessage(""), json.RawMessage(" null ")} {
		out := mustDeclarations(t, []api.Schema{{Name: "a", InputSchema: raw, OutputSchema: raw}})
		require.Contains(t, out, "type AArgs = Record<string, JsonValue>;\n")
		require.Contains(t, out, "  a(args?: AArgs): Promise<JsonValue>;\n")
		require.NotContains(t, out, "AOutput")
	}
}

func TestDeclarations_deterministic(t *testing.T) {
	tools := append(loadTools(t, "tools.json"), loadTools(t, "odd.json")...)
	want := mustDeclarations(t, tools)
	for i := 0; i < 100; i++ {
		shuffled := append([]api.Schema(nil), tools...)
		for j := range shuffled {
			k := (j*7 + i) % len(shuffled)
			shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
		}
		require.Equal(t, want, mustDeclarations(t, shuffled), "render %d", i)
	}
}

func TestDeclarations_optionalArgument(t *testing.T) {
	tests := []struct {
		schema   string
		optional bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, true},
		{`{}`, true},
		{`true`, true},
		{`{"type":"object","required":["a"]}`, false},
		{`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`, false},
		{`{"$ref":"#/$defs/A","$defs":{"A":{"type":"object"}}}`, false},
		{`{"type":"string"}`, false},
		{`{"type":"object","minProperties":1}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			out := mustDeclarations(t, []api.Schema{{Name: "a", InputSchema: json.RawMessage(tc.schema)}})
			require.Equal(t, tc.optional, strings.Contains(out, "a(args?: AArgs)"), out)
		})
	}
}
