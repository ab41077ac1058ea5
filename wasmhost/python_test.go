package wasmhost_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// A build without the Python guest starts a Runtime and runs TypeScript;
// only a Python run fails, saying how to build the guest.
func TestPython_notBuilt(t *testing.T) {
	restore := wasmhost.WithoutPython()
	defer restore()
	rt := newRuntime(t, testConfig().WithPool(0))
	_, err := rt.Run(context.Background(), wasmhost.Program{JS: "return 1 + 1", Language: api.LanguageTypeScript}, &tools{})
	require.NoError(t, err)
	_, err = rt.Run(context.Background(), wasmhost.Program{JS: "1 + 1", Language: api.LanguagePython}, &tools{})
	require.ErrorIs(t, err, wasmhost.ErrNoPython)
	require.ErrorContains(t, err, "make guest-python")
	require.ErrorIs(t, rt.Prepare(context.Background(), api.LanguagePython), wasmhost.ErrNoPython)
}

// What a Python run cannot have is refused before any guest is made,
// built or not.
func TestPython_refusals(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(0))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    wasmhost.Program
		want string
	}{
		{"unknown language", wasmhost.Program{JS: "1", Language: "cobol"}, `unknown language "cobol": the languages are typescript and python`},
		{"memory below the floor", wasmhost.Program{JS: "1", Language: api.LanguagePython, Limits: api.Limits{MemoryBytes: 16 << 20}},
			"a memory limit of 16 MiB is below the 32 MiB a Python program needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.Run(ctx, tc.p, &tools{})
			require.ErrorContains(t, err, tc.want)
			var re *wasmhost.RunError
			require.False(t, errors.As(err, &re), "a refusal is not a run's failure")
		})
	}
	require.ErrorContains(t, rt.Prepare(ctx, "cobol"), `unknown language "cobol"`)
	require.NoError(t, rt.Prepare(ctx, ""), "TypeScript is ready from New")
}
