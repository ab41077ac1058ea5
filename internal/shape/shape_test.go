package shape

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const testBudget = 24 << 10

// resultPart is the result's text in a shaped text: after the label when
// there are logs, before the closing line when something was cut.
func resultPart(t *testing.T, s Shaped, hasLogs bool) string {
	t.Helper()
	text := s.Text
	if hasLogs {
		i := strings.Index(text, "\n"+ResultLabel+"\n")
		require.GreaterOrEqual(t, i, 0, "the result label is there")
		text = text[i+len(ResultLabel)+2:]
	}
	if s.Cut {
		i := strings.LastIndex(text, "\n[output cut to the model budget")
		require.GreaterOrEqual(t, i, 0, "the closing line is there")
		text = text[:i]
	}
	return text
}

func TestOutput_withinBudget_isWhole(t *testing.T) {
	for _, tt := range []struct {
		name   string
		logs   []string
		result string
		want   string
	}{
		{"result only", nil, `{"a":[1,2]}`, "{\n  \"a\": [\n    1,\n    2\n  ]\n}"},
		{"string raw", nil, `"hi <b>"`, "hi <b>"},
		{"logs only", []string{"a", "b"}, "", "a\nb"},
		{"logs and result", []string{"a"}, `1`, "a\nResult:\n1"},
		{"not JSON", nil, `{oops`, "{oops"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Output(tt.logs, json.RawMessage(tt.result), testBudget)
			require.False(t, s.Cut)
			require.Equal(t, tt.want, s.Text)
		})
	}
}

// At the budget the text is whole; one byte past, it is cut.
func TestOutput_budget_atAndPast(t *testing.T) {
	value := json.RawMessage(quote(strings.Repeat("x", 2000)))
	at := Output(nil, value, 2000)
	require.False(t, at.Cut)
	require.Len(t, at.Text, 2000)
	below := Output(nil, value, 2001)
	require.False(t, below.Cut)
	past := Output(nil, value, 1999)
	require.True(t, past.Cut)
	require.LessOrEqual(t, len(past.Text), 1999)
	require.Contains(t, past.Text, "more bytes of this string")
}

// A budget under MinBudget is raised to it.
func TestOutput_budget_belowMinimum(t *testing.T) {
	s := Output(nil, json.RawMessage(quote(strings.Repeat("x", 5000))), 10)
	require.True(t, s.Cut)
	require.LessOrEqual(t, len(s.Text), MinBudget)
	require.Greater(t, len(s.Text), MinBudget/2)
}

func TestOutput_overBudget_isCutStructurally(t *testing.T) {
	items := make([]string, 100_000)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	lines := make([]string, 50_000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i)
	}
	for _, tt := range []struct {
		name   string
		logs   []string
		result string
		json   bool // the result part is JSON
		marker string
	}{
		{"2 MB string", nil, quote(strings.Repeat("ab", 1<<20)), false, "more bytes of this string"},
		{"2 MB string in an object", nil, `{"s":` + quote(strings.Repeat("ab", 1<<20)) + `}`, true, "more bytes)"},
		{"100,000-item array", nil, "[" + strings.Join(items, ",") + "]", true, "more items"},
		{"200-deep object", nil, deep, true, "… an object of 1 key"},
		{"50,000 log lines", lines, "", false, "log lines cut"},
		{"50,000 log lines and an array", lines, "[" + strings.Join(items, ",") + "]", true, "more items"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := Output(tt.logs, json.RawMessage(tt.result), testBudget)
			require.True(t, s.Cut)
			require.LessOrEqual(t, len(s.Text), testBudget)
			require.Greater(t, len(s.Text), 1000, "the text shows a useful part")
			require.Contains(t, s.Text, tt.marker)
			require.Contains(t, s.Text, "the host has the whole value")
			require.Contains(t, s.Text, "return a summary or a slice")
			if tt.json {
				part := resultPart(t, s, len(tt.logs) > 0)
				require.True(t, json.Valid([]byte(part)), "valid JSON: %.300s", part)
			}
			if len(tt.logs) > 0 {
				require.True(t, strings.HasPrefix(s.Text, "line 0\nline 1\n"), "the first lines are kept")
				require.Contains(t, s.Text, "line 49999\n", "the last line is kept")
			}
		})
	}
}

// The array's first items are kept in order, and the marker counts the rest.
func TestOutput_overBudget_arrayKeepsHeadItems(t *testing.T) {
	items := make([]string, 100_000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":%d,"name":"item %d"}`, i, i)
	}
	s := Output(nil, json.RawMessage("["+strings.Join(items, ",")+"]"), testBudget)
	var got []any
	require.NoError(t, json.Unmarshal([]byte(resultPart(t, s, false)), &got))
	require.Greater(t, len(got), 10)
	require.Equal(t, map[string]any{"id": 0.0, "name": "item 0"}, got[0])
	require.Equal(t, fmt.Sprintf("… %d more items", 100_000-(len(got)-1)), got[len(got)-1])
	require.Contains(t, s.Text, fmt.Sprintf("left out %d array items", 100_000-(len(got)-1)))
}

// An object of very many keys keeps its first keys and counts the others.
func TestOutput_overBudget_objectKeepsHeadKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 20_000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%05d":%d`, i, i)
	}
	b.WriteString("}")
	s := Output(nil, json.RawMessage(b.String()), testBudget)
	part := resultPart(t, s, false)
	require.True(t, json.Valid([]byte(part)))
	require.True(t, strings.HasPrefix(part, "{\n  \"k00000\": 0,\n  \"k00001\": 1,"))
	require.Contains(t, part, `"…": "`)
	require.Contains(t, part, `more keys"`)
}
