package serve

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidRequestID_bounds(t *testing.T) {
	require.True(t, validRequestID(strings.Repeat("a", maxRequestIDLen-1)))
	require.True(t, validRequestID(strings.Repeat("a", maxRequestIDLen)))
	require.False(t, validRequestID(strings.Repeat("a", maxRequestIDLen+1)))
	require.False(t, validRequestID(""))
	require.True(t, validRequestID(newRequestID()))
	require.NotEqual(t, newRequestID(), newRequestID())
}

// A kept id can neither forge a log line nor grow one past the bound,
// whatever the header held.
func FuzzValidRequestID(f *testing.F) {
	for _, s := range []string{"abc", "a b", "x\ny", `"}`, strings.Repeat("z", 200), "é", "0f8fad5b-d9cb-469f-a165-70867728950e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !validRequestID(id) {
			return
		}
		require.LessOrEqual(t, len(id), maxRequestIDLen)
		require.NotEmpty(t, id)
		require.False(t, strings.ContainsAny(id, " \t\r\n\"\\<>&'"), id)
		var b strings.Builder
		slog.New(requestLogHandler{slog.NewTextHandler(&b, nil)}).InfoContext(withRequestID(context.Background(), id), "m")
		require.Equal(t, 1, strings.Count(b.String(), "\n"))
		line := b.String()
		require.True(t, strings.Contains(line, "request_id="+id+"\n") || strings.Contains(line, "request_id="+strconv.Quote(id)+"\n"), line)
	})
}
