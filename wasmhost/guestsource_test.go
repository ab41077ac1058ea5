package wasmhost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/guest"
)

// withoutEmbeddedGuest makes this test act as a build that embeds no guest.
func withoutEmbeddedGuest(t *testing.T) {
	real := embeddedWasm
	embeddedWasm = func() []byte { return nil }
	t.Cleanup(func() { embeddedWasm = real })
}

// guestFile writes the embedded guest to a file and returns its path.
func guestFile(t *testing.T) string {
	t.Helper()
	require.NotNil(t, guest.Wasm(), "this test copies the embedded guest: run `make guest`")
	path := filepath.Join(t.TempDir(), "guest.wasm")
	require.NoError(t, os.WriteFile(path, guest.Wasm(), 0o644))
	return path
}

func TestConfig_guestModule_noGuest(t *testing.T) {
	withoutEmbeddedGuest(t)
	t.Setenv(GuestEnv, "")
	_, err := New(context.Background(), NewConfig().WithCompilationCacheDir(""))
	require.ErrorIs(t, err, ErrNoGuest)
	for _, how := range []string{"make guest", "Config.WithGuest", "PTCX_GUEST"} {
		require.ErrorContains(t, err, how, "the error says how to get a guest")
	}
}

func TestConfig_guestModule_environment(t *testing.T) {
	path := guestFile(t)
	withoutEmbeddedGuest(t)
	t.Setenv(GuestEnv, path)
	rt, err := New(context.Background(), NewConfig().WithCompilationCacheDir(""))
	require.NoError(t, err)
	require.False(t, rt.startInline, "a guest PTCX_GUEST names runs on runners, which Run can abandon")
	require.NoError(t, rt.Close(context.Background()))

	t.Setenv(GuestEnv, filepath.Join(t.TempDir(), "missing.wasm"))
	_, err = New(context.Background(), NewConfig().WithCompilationCacheDir(""))
	require.ErrorContains(t, err, "wasmhost: the guest named by PTCX_GUEST: open ")
	require.True(t, errors.Is(err, os.ErrNotExist))
	require.False(t, errors.Is(err, ErrNoGuest), "a wrong path is not a missing guest")
}

func TestConfig_guestModule_precedence(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "not-a-guest.wasm")
	require.NoError(t, os.WriteFile(bad, []byte("not wasm"), 0o644))
	t.Setenv(GuestEnv, bad)
	if guest.Wasm() != nil {
		// The embedded guest wins over PTCX_GUEST.
		_, isEmbedded, err := NewConfig().guestModule()
		require.NoError(t, err)
		require.True(t, isEmbedded)
	}
	// WithGuest wins over both.
	_, _, err := NewConfig().WithGuest([]byte("given")).guestModule()
	require.ErrorContains(t, err, "wasmhost: the guest cannot be metered")
	withoutEmbeddedGuest(t)
	_, _, err = NewConfig().guestModule()
	require.ErrorContains(t, err, "wasmhost: the guest cannot be metered", "PTCX_GUEST is read without an embedded guest")
}
