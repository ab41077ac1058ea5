package guest_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/guest"
	"github.com/ptcx/ptcx/internal/testkit"
)

func TestWasm(t *testing.T) {
	testkit.RequireEmbeddedGuest(t)
	b := guest.Wasm()
	require.True(t, bytes.HasPrefix(b, []byte("\x00asm\x01\x00\x00\x00")), "not a wasm module (version 1)")
	for _, export := range []string{"ptcx_abi_version", "ptcx_buffer", "ptcx_init", "ptcx_prelude_bytecode",
		"ptcx_start", "ptcx_resume", "ptcx_timer", "_initialize"} {
		require.True(t, bytes.Contains(b, []byte(export)), "no %s export", export)
	}
}
