package executor_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/transpile"
	"github.com/ptcx/ptcx/wasmhost"
)

// programOf is a valid program of exactly n bytes: a comment of fill
// characters after "//".
func programOf(n int, fill string) string {
	body := strings.Repeat(fill, (n-2)/len(fill))
	return "//" + body + strings.Repeat("x", n-2-len(body))
}

// A program over the size limit, in bytes, is INVALID_ARGS before any
// policy sees it and before it is transpiled or run; at the limit it runs.
// The schema's maxLength counts characters (an ASCII program past the
// default limit is past it too), so a program of multibyte characters
// within it can still be over the limit in bytes.
func TestRunCode_codeSize_atBelowAndPastTheLimit(t *testing.T) {
	const limit = executor.DefaultMaxCodeBytes
	overBytes := func(n int) string {
		return fmt.Sprintf("at /code: code is %d bytes, over the limit of %d bytes", n, limit)
	}
	for _, tt := range []struct {
		name      string
		code      string
		violation string // "" when the program runs
	}{
		{"below", programOf(limit-1, "x"), ""},
		{"at", programOf(limit, "x"), ""},
		{"multibyte, at", programOf(limit, "é"), ""},
		{"multibyte, one byte past", programOf(limit+1, "é"), overBytes(limit + 1)},
		{"multibyte, at maxLength in characters, twice the limit in bytes", programOf(2*limit-2, "é"), overBytes(2*limit - 2)},
		{"4-byte characters, one byte past", "//" + strings.Repeat("😀", (limit-2)/4) + "xyz", overBytes(limit + 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ran, policed atomic.Int64
			rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				ran.Add(1)
				return wasmhost.Outcome{}, nil
			})
			e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt).
				WithPreExecute(func(context.Context, executor.Request) (executor.Decision, error) {
					policed.Add(1)
					return executor.Decision{}, nil
				}))
			r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(tt.code)})
			if tt.violation == "" {
				require.True(t, r.OK(), r.Text)
				require.EqualValues(t, 1, ran.Load())
				return
			}
			require.NotNil(t, r.Err, "a program of %d bytes ran", len(tt.code))
			require.Equal(t, api.CodeInvalidArgs, r.Err.Code, r.Text)
			require.Equal(t, []string{tt.violation}, r.Err.Violations)
			require.Contains(t, r.Err.Message, "invalid arguments for run_code: code is ")
			require.Contains(t, r.Err.Message, "send a shorter program")
			require.Zero(t, ran.Load(), "the program never reached the runtime")
			require.Zero(t, policed.Load(), "no policy saw it")
		})
	}
}

// The schema's maxLength is registry.MaxCodeLength characters, however many
// bytes they take.
func TestRunCode_codeSize_schemaMaxLengthCountsCharacters(t *testing.T) {
	rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		return wasmhost.Outcome{}, nil
	})
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(programOf(registry.MaxCodeLength, "x"))})
	require.True(t, r.OK(), r.Text)
	r = e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(programOf(registry.MaxCodeLength+1, "x"))})
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Len(t, r.Err.Violations, 1)
	require.Contains(t, r.Err.Violations[0], "at /code:")
	r = e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(strings.Repeat("é", registry.MaxCodeLength+1))})
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Contains(t, r.Err.Violations[0], "at /code:", "the schema refuses it before the byte check")
}

// A deployment may lower the limit; 0 is the default; negative or above
// the default is refused.
func TestConfig_WithMaxCodeBytes(t *testing.T) {
	rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		return wasmhost.Outcome{}, nil
	})
	for _, tt := range []struct {
		limit, size int
		ok          bool
	}{
		{100, 99, true},
		{100, 100, true},
		{100, 101, false},
		{1, 1, true},
		{1, 2, false},
		{0, executor.DefaultMaxCodeBytes, true},
		{0, executor.DefaultMaxCodeBytes + 1, false},
	} {
		e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt).WithMaxCodeBytes(tt.limit))
		code := ";"
		if tt.size > 1 {
			code = programOf(tt.size, "é") // within the schema's maxLength in characters
		}
		r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(code)})
		require.Equal(t, tt.ok, r.OK(), "limit %d, size %d: %s", tt.limit, tt.size, r.Text)
		if !tt.ok {
			require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
			want := tt.limit
			if want == 0 {
				want = executor.DefaultMaxCodeBytes
			}
			require.Contains(t, r.Err.Message, fmt.Sprintf("code is %d bytes, over the limit of %d bytes", tt.size, want))
		}
	}
	for _, bad := range []int{-1, executor.DefaultMaxCodeBytes + 1} {
		_, err := executor.New(registry.New(), executor.NewConfig().WithMaxCodeBytes(bad))
		require.ErrorContains(t, err, "program size limit", bad)
	}
	_, err := executor.New(registry.New(), executor.NewConfig().WithMaxCodeBytes(executor.DefaultMaxCodeBytes))
	require.NoError(t, err)
}

// The three statements of the program size bound agree: the executor's,
// the stripper's and run_code's schema's.
func TestDefaultMaxCodeBytes_agrees(t *testing.T) {
	require.Equal(t, transpile.MaxSourceBytes, executor.DefaultMaxCodeBytes)
	require.Equal(t, transpile.MaxSourceBytes, registry.MaxCodeLength)
}

// A program the stripper's pre-check refuses for the host work it would
// cost is invalid arguments, naming the bound; no policy hook or sandbox
// sees it.
func TestRunCode_stripperLimitIsInvalidArgs(t *testing.T) {
	var ran atomic.Int64
	rt := fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		ran.Add(1)
		return wasmhost.Outcome{}, nil
	})
	e := newExecutor(t, ptcRegistry(t), executor.NewConfig().WithRuntime(rt))
	r := e.Execute(context.Background(), executor.Call{Name: "run_code", Args: runCode(strings.Repeat("const a = 1;\n", 4000))})
	require.Zero(t, ran.Load())
	require.False(t, r.OK())
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code, r.Text)
	require.Contains(t, r.Text, "redeclaration work")
	require.Equal(t, []string{"at /code: " + strings.TrimPrefix(r.Err.Message, "invalid arguments for run_code: ")}, r.Err.Violations)
}
