package wasmhost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// encodeSnapshotV3 is the encoder of format 3 (snapshot.FormatHash) as it
// was before format 4, kept to make the snapshots of that format a host
// may still hold: the index before the data, one XXH3-64 of the body.
func encodeSnapshotV3(t testing.TB, img *image, st *snapshot.State) []byte {
	t.Helper()
	meta, err := json.Marshal(&st.Meta)
	require.NoError(t, err)
	mem := st.Memory
	index := snapshot.ChangedBlocks(mem, img.memory)
	raw := 4 + len(meta) + 8 + 4*len(index) + snapshot.BlockSize*len(index)
	out := snapshot.AppendHeader(nil, snapshot.FormatHash, img.moduleHash[:], img.memoryHash[:], img.engine, snapshot.CodecStored, uint64(raw))
	bodyAt := len(out)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	out = append(out, meta...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(mem)/abi.PageSize))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(index)))
	for _, i := range index {
		out = binary.LittleEndian.AppendUint32(out, i)
	}
	for _, i := range index {
		out = append(out, mem[int(i)*snapshot.BlockSize:int(i+1)*snapshot.BlockSize]...)
	}
	snapshot.SealHash(out, bodyAt)
	return out
}

// bodyStartV3 returns where the body of snapshot b (format 3) starts.
func bodyStartV3(b []byte) int {
	return snapshot.HeaderSize + int(b[snapshot.HeaderSize-1]) + 1 + 8 + 8
}

// snapshotV3 is the fixture's snapshot written in format 3.
func snapshotV3(t testing.TB) (*Runtime, []byte) {
	rt, snap, _ := fixture(t)
	st, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	st.Memory = wholeMemory(rt.image, st)
	return rt, encodeSnapshotV3(t, rt.image, st)
}

func TestEncodeSnapshotV3_isFormatThree(t *testing.T) {
	rt, v3 := snapshotV3(t)
	h, err := snapshot.ReadHeader(v3)
	require.NoError(t, err)
	require.Equal(t, uint16(snapshot.FormatHash), h.Format)
	require.Equal(t, bodyStartV3(v3), h.BodyAt)
	_, snap, _ := fixture(t)
	want, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	got, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, v3)
	require.NoError(t, err)
	require.Equal(t, want.Meta, got.Meta)
	require.Equal(t, want.Blocks, got.Blocks)
	require.Equal(t, want.Data, got.Data)
	require.False(t, got.CheckSums, "format 3's check is made before the body is used")
}

// A snapshot of format 3, stored or compressed, still resumes, to the
// answer its run gives straight through.
func TestRuntime_Resume_formatThree(t *testing.T) {
	rt, v3 := snapshotV3(t)
	compressed, err := CompressSnapshot(v3)
	require.NoError(t, err)
	for name, b := range map[string][]byte{"stored": v3, "compressed": compressed} {
		t.Run(name, func(t *testing.T) {
			out, err := rt.Resume(context.Background(), b, okTools, Resumption{})
			require.NoError(t, err)
			require.JSONEq(t, `[{"n": 1}, {"n": 2}]`, string(out.Result))
			require.Equal(t, []string{"before"}, out.Logs)
		})
	}
}
