package shape

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzOutput: whatever the logs, the result and the budget, the text is
// within the budget, and the result part of a cut JSON result (not a
// string) is valid JSON.
func FuzzOutput(f *testing.F) {
	f.Add("a\nb", `{"a":[1,2,3],"b":"xyz"}`, 1024)
	f.Add("", `[`+strings.Repeat(`"abcdefgh",`, 500)+`1]`, 1100)
	f.Add(strings.Repeat("line\n", 1000), `"s"`, 2000)
	f.Add("", strings.Repeat("[", 300)+strings.Repeat("]", 300), 1024)
	f.Add("é", `"\u00e9\ud83d\ude00"`, 1024)
	f.Fuzz(func(t *testing.T, logText, result string, budget int) {
		budget = MinBudget + abs(budget)%8192
		var logs []string
		if logText != "" {
			logs = strings.Split(logText, "\n")
		}
		s := Output(logs, json.RawMessage(result), budget)
		require.LessOrEqual(t, len(s.Text), budget)
		trimmed := strings.TrimSpace(result)
		if !s.Cut || trimmed == "" || trimmed[0] == '"' || !json.Valid([]byte(trimmed)) {
			return
		}
		part := resultPart(t, s, len(logs) > 0)
		require.True(t, json.Valid([]byte(part)), "valid JSON: %.300q", part)
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
