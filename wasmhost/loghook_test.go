package wasmhost_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestWithLogHook_seesEachLineAsWritten(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name    string
		js      string
		limits  api.Limits
		want    []string // what the hook saw
		wantErr api.Kind
	}{
		{
			name: "every level, in order, before a nested call returns",
			js:   `console.log("a", 1); console.warn("w"); console.error("e"); await tools.echo({}); console.info("i"); return 1;`,
			want: []string{"a 1", "[warn] w", "[error] e", "i"},
		},
		{
			// The hook sees what the program wrote; the outcome's logs stay
			// the authority on what the output limit kept.
			name:    "past the output limit",
			js:      `console.log("x".repeat(30)); console.log("y".repeat(30)); return 1;`,
			limits:  api.Limits{OutputBytes: 40},
			want:    []string{strings.Repeat("x", 30), strings.Repeat("y", 30)},
			wantErr: api.KindOutputLimit,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			ctx := wasmhost.WithLogHook(context.Background(), func(line string) { seen = append(seen, line) })
			_, err := rt.Run(ctx, wasmhost.Program{JS: tt.js, Tools: toolNames, Limits: tt.limits}, &tools{})
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				var re *wasmhost.RunError
				require.ErrorAs(t, err, &re)
				require.Equal(t, tt.wantErr, re.Kind)
			}
			require.Equal(t, tt.want, seen)
		})
	}
}

func TestWithLogHook_nilAndAbsentAreNoHook(t *testing.T) {
	rt := sharedRuntime(t)
	for _, ctx := range []context.Context{context.Background(), wasmhost.WithLogHook(context.Background(), nil)} {
		out, err := rt.Run(ctx, wasmhost.Program{JS: `console.log("still logged"); return 1;`, Tools: toolNames}, &tools{})
		require.NoError(t, err)
		require.Equal(t, []string{"still logged"}, out.Logs)
	}
}
