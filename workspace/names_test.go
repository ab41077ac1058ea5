package workspace_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

// TestTools_controlCharacterNames: a file named "a\nb" is shown quoted in
// the text the model reads, so it cannot forge a line of the listing; the
// value keeps the real name.
func TestTools_controlCharacterNames(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	e.file("a\nb", "needle\n")
	e.file("dir\x1b[2J/c.txt", "needle\n")
	e.file("plain.txt", "needle\n")
	for _, tc := range []struct {
		tool string
		args m
		want []string
	}{
		{"list", m{}, []string{`"a\nb" (7 bytes)`, `"dir\x1b[2J"/`, "plain.txt (7 bytes)"}},
		{"glob", m{"pattern": "**"}, []string{`"a\nb"`, `"dir\x1b[2J/c.txt"`, "plain.txt"}},
		{"grep", m{"pattern": "needle"}, []string{`"a\nb":1: needle`, `"dir\x1b[2J/c.txt":1: needle`, "plain.txt:1: needle"}},
		{"read", m{"path": "a\nb", "start_line": 1, "end_line": 1}, []string{"needle\n"}},
		{"write", m{"path": "new\nname", "content": "x"}, []string{`created "new\nname" (1 bytes)`}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			out, err := e.call(t, context.Background(), tc.tool, tc.args)
			require.NoError(t, err)
			for _, want := range tc.want {
				require.Contains(t, out.Text, want)
			}
			require.NotContains(t, out.Text, "a\nb")
			require.NotContains(t, out.Text, "\x1b")
		})
	}
	var g struct {
		Matches []string `json:"matches"`
	}
	out, err := e.call(t, context.Background(), "glob", m{"pattern": "a*"})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out.Value, &g))
	require.Equal(t, []string{"a\nb"}, g.Matches, "the value holds the real name")
}
