package wasmhost

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/guest"
	"github.com/ptcx/ptcx/wasmhost/internal/wasmbin"
)

// The metered guest has the mutable globals the image captures.
func TestParseModule_guest(t *testing.T) {
	require.NotNil(t, guest.Wasm(), "no guest built: run make guest")
	bin, err := meterGuest(guest.Wasm())
	require.NoError(t, err)
	m, err := wasmbin.Parse(bin)
	require.NoError(t, err)
	// __stack_pointer, and the meter's countdown, last and unexported.
	require.Len(t, m.Mutable, 2)
	require.Equal(t, "__stack_pointer", m.Mutable[0].Export)
	require.Equal(t, "", m.Mutable[1].Export)
	require.Equal(t, m.Globals-1, m.Mutable[1].Index)
}
