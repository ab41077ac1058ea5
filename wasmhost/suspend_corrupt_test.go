package wasmhost_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// snapshotBodyAt returns where the body of snapshot b (format 4) starts:
// the header's fixed fields, the engine's name, codec, raw and the two
// checks.
func snapshotBodyAt(b []byte) int { return 77 + int(b[76]) + 1 + 8 + 8 + 8 }

// region is a byte of a snapshot, and the reason a snapshot with that
// byte flipped (^0x10) is refused for.
type region struct {
	at  int
	why string // a regular expression
}

// snapshotRegions returns, by name, a byte of each region of snapshot b
// (format 4, stored): the header's fields, the table, the pages, the first,
// a middle and the last block's data, the index and the count.
func snapshotRegions(t *testing.T, b []byte) map[string]region {
	t.Helper()
	n := int(b[76])
	body := snapshotBodyAt(b)
	metaLen := int(binary.LittleEndian.Uint32(b[body:]))
	dataAt := body + 4 + metaLen + 4
	count := int(binary.LittleEndian.Uint32(b[len(b)-4:]))
	require.Equal(t, len(b)-dataAt-4, count*(4096+4), "the body's layout")
	require.GreaterOrEqual(t, count, 3)
	indexAt := dataAt + count*4096
	const table, memory = "its header, table or index is corrupt", "its memory is corrupt: its blocks' checksum"
	// With the engine's length flipped, the fields after the name are read
	// from elsewhere (a checksum's byte for the codec, others for the raw
	// size), so any of their refusals is the right one.
	return map[string]region{
		"magic":           {0, "not a ptcx snapshot"},
		"format":          {8, "format version 20, this host reads versions 1 to 4"},
		"abi":             {10, "guest ABI version"},
		"module":          {12, "made by guest module"},
		"image":           {44, "made from initialised image"},
		"engine's length": {76, "codec|cut short|not the|out of range|inflated, over|" + table},
		"engine":          {77, table},
		"codec":           {77 + n, "codec 16 is unknown"},
		"raw":             {78 + n, "not the .* its header declares"},
		"table check":     {86 + n, table},
		"memory check":    {94 + n, memory},
		"table's length":  {body, "memory blocks, which take"},
		"table":           {body + 4 + metaLen/2, table},
		"pages":           {dataAt - 4, table},
		"first block":     {dataAt + 100, memory},
		"middle block":    {dataAt + (count/2)*4096 + 2000, memory},
		"last block":      {indexAt - 1, memory},
		"index":           {indexAt + 4*(count/2), table},
		"count":           {len(b) - 4, "memory blocks, which take"},
	}
}

// heapProgram holds 2 MiB of heap past the image when it waits on its
// call (so that its memories are kept as resume spares, on wazero), and
// answers heapAnswer.
const (
	heapProgram = `globalThis.big = "abcdefgh".repeat(1 << 18); const r = await tools.echo({n: 1}); return [r.n, big.length];`
	heapAnswer  = `[1, 2097152]`
)

// A snapshot with a byte flipped anywhere is refused with ErrSnapshot and
// its reason, nothing of it runs (no call is dispatched), and the memory a
// refused resume wrote blocks into is not kept: the resume spare it was
// restored into is gone, and the next resume, into a memory of its own,
// is the program's.
func TestRuntime_Resume_refusesAFlippedByteInEachRegion(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(0))
	tools := &recordingTools{}
	s := suspendAt(t, rt, heapProgram, api.Limits{}, tools, always)
	good := s.Snapshot
	resumeGood := func() {
		t.Helper()
		out, err := rt.Resume(context.Background(), good, &recordingTools{}, wasmhost.Resumption{})
		require.NoError(t, err)
		require.JSONEq(t, heapAnswer, string(out.Result))
	}
	for name, reg := range snapshotRegions(t, good) {
		t.Run(name, func(t *testing.T) {
			resumeGood() // a resume spare, where the engine keeps them
			spares := rt.PoolStats().ResumeSpares
			b := append([]byte(nil), good...)
			b[reg.at] ^= 0x10
			d := &recordingTools{}
			out, err := rt.Resume(context.Background(), b, d, wasmhost.Resumption{})
			require.ErrorIs(t, err, wasmhost.ErrSnapshot)
			require.Regexp(t, reg.why, err.Error())
			require.Empty(t, d.log(), "nothing of it ran")
			require.Nil(t, out.Result)
			if spares > 0 {
				require.LessOrEqual(t, rt.PoolStats().ResumeSpares, spares, "a memory written by a refused resume is not kept")
			}
		})
	}
	resumeGood()
	requireHealthy(t, rt)
}

// A flipped byte of a block's data is found only as the blocks are
// written: refused the same, and the resume spare it was written into is
// released.
func TestRuntime_Resume_corruptBlockDiscardsItsMemory(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(0))
	s := suspendAt(t, rt, heapProgram, api.Limits{}, &recordingTools{}, always)
	regions := snapshotRegions(t, s.Snapshot)
	for _, region := range []string{"first block", "middle block", "last block"} {
		t.Run(region, func(t *testing.T) {
			out, err := rt.Resume(context.Background(), s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
			require.NoError(t, err)
			require.JSONEq(t, heapAnswer, string(out.Result))
			spares := rt.PoolStats().ResumeSpares
			if engineUnderTest() == wasmhost.EngineWazero {
				require.Equal(t, 1, spares, "the good resume's memory, kept")
			}
			b := append([]byte(nil), s.Snapshot...)
			b[regions[region].at] ^= 1
			d := &recordingTools{}
			_, err = rt.Resume(context.Background(), b, d, wasmhost.Resumption{})
			require.ErrorIs(t, err, wasmhost.ErrSnapshot)
			require.ErrorContains(t, err, "its memory is corrupt: its blocks' checksum is")
			require.Empty(t, d.log())
			require.Equal(t, max(spares-1, 0), rt.PoolStats().ResumeSpares, "the spare written into is released, not kept")
			c, err := wasmhost.CompressSnapshot(b)
			require.NoError(t, err, "compressing does not read the blocks' data")
			_, err = rt.Resume(context.Background(), c, d, wasmhost.Resumption{})
			require.ErrorIs(t, err, wasmhost.ErrSnapshot)
			require.ErrorContains(t, err, "its memory is corrupt", "compressed, refused the same")
			require.Empty(t, d.log())
		})
	}
	out, err := rt.Resume(context.Background(), s.Snapshot, &recordingTools{}, wasmhost.Resumption{})
	require.NoError(t, err)
	require.JSONEq(t, heapAnswer, string(out.Result))
	requireHealthy(t, rt)
}

// With Resumption.Recycle, a snapshot refused for its blocks was given to
// the Runtime (the run had started): its Suspended no longer holds it.
func TestRuntime_Resume_corruptBlockWithRecycle(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(0))
	s := suspendAt(t, rt, `globalThis.big = "abcdefgh".repeat(4096); return await tools.echo({n: 1});`,
		api.Limits{}, &recordingTools{}, always)
	at := snapshotRegions(t, s.Snapshot)["middle block"].at
	s.Snapshot[at] ^= 1
	_, err := rt.Resume(context.Background(), s.Snapshot, &recordingTools{}, wasmhost.Resumption{Recycle: s})
	require.ErrorIs(t, err, wasmhost.ErrSnapshot)
	require.Nil(t, s.Snapshot, "given to the Runtime as the run started")
	requireHealthy(t, rt)
}
