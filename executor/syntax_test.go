package executor_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/wasmhost"
)

// A syntax error on a very long line shows the part of the line around the
// error, not the whole line; a short line is shown whole.
func TestRunCode_syntaxError_showsAnExcerptOfALongLine(t *testing.T) {
	rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		return wasmhost.Outcome{}, nil
	})
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
	for _, tt := range []struct {
		name, code, shown string
		whole             bool
	}{
		{"short", "const x = ;", "const x = ;", true},
		{"at the excerpt's size", "const x = ; //" + strings.Repeat("c", 200-14), "const x = ; //cc", true},
		{"one byte past it", "const x = ; //" + strings.Repeat("c", 200-13), "const x = ; //cc", false},
		{"long, error at the end", "let a = 0; " + strings.Repeat("a++; ", 50_000) + "const x = ;", "a++; a++; const x = ;", false},
		{"long, error at the start", "const x = ; let a = 0; " + strings.Repeat("a++; ", 50_000), "const x = ; let a = 0; a++;", false},
		{"long, multibyte", "const s = \"" + strings.Repeat("é", 50_000) + "\"; const x = ; const t = \"" + strings.Repeat("é", 50_000) + "\";", "\"; const x = ; const t = \"é", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(tt.code)})
			require.NotNil(t, r.Err)
			require.Equal(t, api.KindSyntax, r.Err.Kind, r.Text)
			require.Contains(t, r.Text, tt.shown)
			require.True(t, utf8.ValidString(r.Text))
			require.NotNil(t, r.Err.Location, "the location is data, not only text")
			require.Equal(t, 1, r.Err.Location.Line)
			require.Contains(t, r.Err.Location.LineText, tt.shown)
			require.Contains(t, r.Err.Message, r.Err.Location.LineText)
			if tt.whole {
				require.Contains(t, r.Text, "\n  "+tt.code)
				return
			}
			require.Less(t, len(r.Text), 500, r.Text)
			require.Contains(t, r.Text, "…")
		})
	}
}
