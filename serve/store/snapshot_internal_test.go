package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The bound is checked on the length alone: no test needs 512 MiB.
func TestCheckSnapshot_bound(t *testing.T) {
	require.NoError(t, checkSnapshot("below", MaxSnapshotBytes-1))
	require.NoError(t, checkSnapshot("at", MaxSnapshotBytes))
	require.ErrorContains(t, checkSnapshot("past", MaxSnapshotBytes+1), "snapshot past is 536870913 bytes, over store.MaxSnapshotBytes (536870912)")
}
