package sdkgen

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAccepts(t *testing.T) {
	const value = `{"command":"ls -la"}`
	tests := []struct {
		name      string
		schema    string
		ok, known bool
	}{
		{"open object", `{"type":"object"}`, true, true},
		{"typical bash", `{"type":"object","properties":{"command":{"type":"string","minLength":1},"timeout":{"type":"integer","minimum":0}},"required":["command"],"additionalProperties":false}`, true, true},
		{"true", `true`, true, true},
		{"false", `false`, false, true},
		{"not an object", `{"type":"array"}`, false, true},
		{"extra field required", `{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string"}},"required":["command","cwd"]}`, false, true},
		{"command forbidden", `{"type":"object","properties":{"cmd":{"type":"string"}},"additionalProperties":false}`, false, true},
		{"command of another type", `{"type":"object","properties":{"command":{"type":"array"}}}`, false, true},
		{"additional schema rejects", `{"type":"object","additionalProperties":{"type":"number"}}`, false, true},
		{"additional schema accepts", `{"type":"object","additionalProperties":{"type":"string"}}`, true, true},
		{"enum rejects", `{"type":"object","properties":{"command":{"enum":["pwd"]}}}`, false, true},
		{"enum accepts", `{"type":"object","properties":{"command":{"enum":["pwd","ls -la"]}}}`, true, true},
		{"const", `{"properties":{"command":{"const":"ls -la"}}}`, true, true},
		{"too short", `{"properties":{"command":{"minLength":10}}}`, false, true},
		{"too long", `{"properties":{"command":{"maxLength":3}}}`, false, true},
		{"minProperties", `{"minProperties":2}`, false, true},
		{"maxProperties", `{"maxProperties":1}`, true, true},
		{"annotations only", `{"title":"t","description":"d","$schema":"x","$defs":{"a":{"pattern":"x"}}}`, true, true},
		{"unknown keyword on the value", `{"properties":{"command":{"type":"string","pattern":"^ls"}}}`, false, false},
		{"unknown keyword on the object", `{"type":"object","allOf":[{"required":["command"]}]}`, false, false},
		{"format is not evaluated", `{"properties":{"command":{"type":"string","format":"uri"}}}`, false, false},
		{"unknown keyword on an absent property", `{"properties":{"command":{"type":"string"},"timeout":{"type":"integer","minimum":1}}}`, true, true},
		{"malformed required", `{"required":"command"}`, false, false},
	}
	v, err := parseJSON([]byte(value))
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseJSON([]byte(tc.schema))
			require.NoError(t, err)
			ok, known := accepts(s, v)
			require.Equal(t, tc.known, known, "known")
			if known {
				require.Equal(t, tc.ok, ok, "ok")
			}
		})
	}
}

func TestJSONEqual(t *testing.T) {
	parse := func(s string) any {
		v, err := parseJSON([]byte(s))
		require.NoError(t, err)
		return v
	}
	require.True(t, jsonEqual(parse(`1`), parse(`1.0`)))
	require.True(t, jsonEqual(parse(`{"a":[1,"x"],"b":null}`), parse(`{"b":null,"a":[1,"x"]}`)))
	require.False(t, jsonEqual(parse(`{"a":1}`), parse(`{"a":1,"b":2}`)))
	require.False(t, jsonEqual(parse(`[1]`), parse(`[1,1]`)))
	require.False(t, jsonEqual(parse(`"1"`), parse(`1`)))
	require.False(t, jsonEqual(parse(`null`), parse(`false`)))
	require.False(t, jsonEqual(parse(`"a"`), parse(`["a"]`)))
}
