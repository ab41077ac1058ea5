package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/executor"
)

func TestMCP_session(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"sdk in the description", []string{"--session", "--no-builtin"}},
		{"sdk in the instructions", []string{"--session", "--no-builtin", "--sdk-in", "instructions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _ := serveMCP(t, tc.args...)
			list, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			require.Len(t, list.Tools, 1)
			require.Contains(t, list.Tools[0].Description, executor.SessionPrompt, "the model is told state persists")

			text, isErr := callTool(t, cs, "run_code", map[string]any{"description": "remember", "code": `const remembered = 6 * 7; return remembered`})
			require.False(t, isErr, text)
			require.Equal(t, "42", text)
			text, isErr = callTool(t, cs, "run_code", map[string]any{"description": "recall", "code": `return remembered + 1`})
			require.False(t, isErr, text)
			require.Equal(t, "43", text)

			other, _ := serveMCP(t, tc.args...)
			text, isErr = callTool(t, other, "run_code", map[string]any{"description": "recall", "code": `return typeof remembered`})
			require.False(t, isErr, text)
			require.Equal(t, "undefined", text, "another connection has a state of its own")
		})
	}
}

func TestMCP_noSessionByDefault(t *testing.T) {
	cs, _ := serveMCP(t, "--no-builtin")
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.NotContains(t, list.Tools[0].Description, "State persists")
	text, isErr := callTool(t, cs, "run_code", map[string]any{"description": "remember", "code": `globalThis.remembered = 1; return 1`})
	require.False(t, isErr, text)
	text, isErr = callTool(t, cs, "run_code", map[string]any{"description": "recall", "code": `return typeof remembered`})
	require.False(t, isErr, text)
	require.Equal(t, "undefined", text)
}
