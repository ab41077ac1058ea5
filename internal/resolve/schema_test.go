package resolve

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// TestDefinition_formatRegexValuesBounded: a value the validator compiles
// as a regular expression (draft-07's asserted "format": "regex", or a
// meta-schema reached through $ref) is held to internal/regexbound's
// bounds, below, at and above each; the schema's own expressions are the
// registrant's, not bounded.
func TestDefinition_formatRegexValuesBounded(t *testing.T) {
	own := strings.Repeat("a", 5000) // over 4 KiB: a trusted schema's own pattern compiles
	d, err := New(api.Schema{
		Name: "t",
		InputSchema: json.RawMessage(fmt.Sprintf(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",`+
			`"properties":{"re":{"type":"string","format":"regex"},"own":{"type":"string","pattern":%q}}}`, own)),
		OutputSchema: json.RawMessage(`{"$ref":"http://json-schema.org/draft-07/schema#"}`),
	}, nil, nil)
	require.NoError(t, err)
	require.Nil(t, d.ValidateArgs(map[string]any{"own": own}))

	tests := []struct {
		name, re, problem string
	}{
		{"short", "a+b", ""},
		{"length at", strings.Repeat("[ab]", 1024), ""},
		{"length above", strings.Repeat("[ab]", 1024) + "a", "the regular expression is too long"},
		{"the red team's 0.9 MB", strings.Repeat("a", 900_000), "the regular expression is too long"},
		{"size at", "x{1000}y{1000}z{48}", ""},
		{"size above", "x{1000}y{1000}z{49}", "the regular expression is too large"},
		{"not a regex", "((", "missing closing )"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argErr := d.ValidateArgs(map[string]any{"re": tt.re})
			out, _ := json.Marshal(map[string]any{"pattern": tt.re})
			outErr := d.ValidateOutput(out)
			if tt.problem == "" {
				require.Nil(t, argErr)
				require.Nil(t, outErr)
				return
			}
			require.NotNil(t, argErr)
			require.Equal(t, api.CodeInvalidArgs, argErr.Code)
			require.Contains(t, argErr.Message, tt.problem)
			require.NotNil(t, outErr)
			require.Equal(t, api.CodeInvalidToolOutput, outErr.Code)
			require.Contains(t, outErr.Message, tt.problem)
		})
	}
}
