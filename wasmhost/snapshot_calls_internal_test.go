package wasmhost

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// SnapshotCalls reads a table of up to the meta bound, stored or
// compressed: at the bound and below it, not past it.
func TestSnapshotCalls_tableBound(t *testing.T) {
	_, snap, body := syntheticSnapshot(t)
	metaLen := int(binary.LittleEndian.Uint32(body))
	compressed, err := CompressSnapshot(snap)
	require.NoError(t, err)
	defer snapshot.SetMaxMeta(MaxSnapshotMetaBytes)
	for name, b := range map[string][]byte{"stored": snap, "compressed": compressed} {
		t.Run(name, func(t *testing.T) {
			for _, bound := range []int{metaLen + 1, metaLen} {
				snapshot.SetMaxMeta(bound)
				tools, calls, err := SnapshotCalls(b)
				require.NoError(t, err, "bound %d, table %d", bound, metaLen)
				require.Equal(t, []string{"a", "b"}, tools)
				require.Equal(t, []PendingCall{{ID: 2, Name: "b", Args: []byte(`{"x":1}`), State: CallHeld}}, calls, "the answered call is not waited on")
			}
			snapshot.SetMaxMeta(metaLen - 1)
			_, _, err := SnapshotCalls(b)
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, "its table's length is out of range")
		})
	}
}
