package wasmhost_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestConfig_WithBytecodeCache_bounds(t *testing.T) {
	tests := []struct {
		name    string
		entries int
		bytes   int64
		want    string
	}{
		{"off", 0, 0, ""},
		{"one byte", 1, 1, ""},
		{"no bytes", 1, 0, "a bytecode cache of 0 bytes: the size must be positive (0 entries turns the cache off)"},
		{"negative", -1, 1, "a bytecode cache of -1 entries: the count must be positive (0 turns the cache off)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := wasmhost.New(context.Background(), testConfig().WithBytecodeCache(tt.entries, tt.bytes))
			if tt.want != "" {
				require.EqualError(t, err, "wasmhost: "+tt.want)
				return
			}
			require.NoError(t, err)
			defer rt.Close(context.Background())
			requireHealthy(t, rt)
			require.Zero(t, rt.BytecodeStats().Entries, "nothing fits")
		})
	}
}

// TestRuntime_Run_bytecodeCached: a program seen before runs from its
// cached bytecode with the same outcome: result, logs, its functions'
// source, and the lines of its errors.
func TestRuntime_Run_bytecodeCached(t *testing.T) {
	for _, image := range []bool{true, false} {
		t.Run(fmt.Sprint("image=", image), func(t *testing.T) {
			rt := newRuntime(t, testConfig().WithImage(image))
			const ok = "function f() { return 41 }\nconsole.log(f.toString());\nreturn f() + (await tools.echo({n: 1})).n"
			const fails = "const x = 1;\nthrow new Error(\"at line 2\")"
			var first [2]string
			for i := range 3 {
				out, re, _ := runJS(t, rt, ok, api.Limits{})
				require.Nil(t, re)
				require.JSONEq(t, `42`, string(out.Result))
				require.Equal(t, []string{"function f() { return 41 }"}, out.Logs)
				_, re, _ = runJS(t, rt, fails, api.Limits{})
				require.NotNil(t, re)
				got := [2]string{re.Message, re.Stack}
				if i == 0 {
					first = got
					require.Contains(t, re.Stack, ":2")
				}
				require.Equal(t, first, got)
			}
			s := rt.BytecodeStats()
			require.Equal(t, 2, s.Entries)
			require.Equal(t, int64(4), s.Hits)
			require.Equal(t, int64(2), s.Misses)
		})
	}
}

func TestRuntime_Run_bytecodeNotCachedForSyntaxErrors(t *testing.T) {
	rt := newRuntime(t, testConfig())
	for range 2 {
		_, re, _ := runJS(t, rt, `return (`, api.Limits{})
		require.NotNil(t, re)
		require.Equal(t, api.KindSyntax, re.Kind)
	}
	require.Zero(t, rt.BytecodeStats().Entries)
}

// TestRuntime_Run_bytecodeCacheBounds: below, at and past the entry bound
// the least recently used program goes first; past the byte bound nothing
// is kept.
func TestRuntime_Run_bytecodeCacheBounds(t *testing.T) {
	tests := []struct {
		name     string
		entries  int
		bytes    int64
		programs int
		want     int
	}{
		{"below the entries", 3, 1 << 20, 2, 2},
		{"at the entries", 3, 1 << 20, 3, 3},
		{"past the entries", 3, 1 << 20, 4, 3},
		{"past the bytes", 3, 64, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, testConfig().WithBytecodeCache(tt.entries, tt.bytes))
			for i := range tt.programs {
				out, re, _ := runJS(t, rt, fmt.Sprintf("return %d", i), api.Limits{})
				require.Nil(t, re)
				require.JSONEq(t, fmt.Sprint(i), string(out.Result))
			}
			s := rt.BytecodeStats()
			require.Equal(t, tt.want, s.Entries)
			if tt.want > 0 {
				// The most recent program is kept; with one too many, the
				// first is gone.
				runJS(t, rt, fmt.Sprintf("return %d", tt.programs-1), api.Limits{})
				require.Equal(t, s.Hits+1, rt.BytecodeStats().Hits)
				runJS(t, rt, "return 0", api.Limits{})
				hit := tt.programs <= tt.entries
				require.Equal(t, hit, rt.BytecodeStats().Hits == s.Hits+2)
			}
		})
	}
}
