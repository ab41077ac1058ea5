//go:build linux

package wasmhost

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// populateBlocks backs pages without changing them, and skips blocks
// within the image or past the reservation.
func TestPopulateBlocks(t *testing.T) {
	mem, ok := reserve(4*pageSize, 0)
	require.True(t, ok)
	defer release(mem)
	m := &cappedMemory{mapped: mem}
	perPage := uint32(pageSize / blockSize)
	blocks := []uint32{0, 1, 2*perPage + 3, 2*perPage + 4, 2*perPage + 5, 3 * perPage, 4 * perPage, 1 << 30}
	require.NotPanics(t, func() { populateBlocks(m, blocks, pageSize) })
	require.Equal(t, make([]byte, len(mem)), mem, "populating writes nothing")
	require.NotPanics(t, func() { populateBlocks(&cappedMemory{}, blocks, 0) }, "no reservation: nothing to do")
}
