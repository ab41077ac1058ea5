package wasmhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

// snapshotFixture is one Runtime and one real snapshot of a run that
// logged, set a timer and waits on two calls, shared by the tests and the
// fuzz targets of this file.
var snapshotFixture struct {
	once sync.Once
	rt   *Runtime
	snap []byte
	body []byte // snap's body
	err  error
}

func fixture(t testing.TB) (*Runtime, []byte, []byte) {
	t.Helper()
	f := &snapshotFixture
	f.once.Do(func() {
		ctx := context.Background()
		if f.rt, f.err = New(ctx, NewConfig().WithPool(0)); f.err != nil {
			return
		}
		d := DispatcherFunc(func(_ string, args json.RawMessage, done func(CallResult)) {
			done(CallResult{OK: true, Value: args})
		})
		out, err := f.rt.Run(ctx, Program{
			JS: `console.log("before"); const m = new Map([[1, "x".repeat(10000)]]); setTimeout(() => {}, 100);
				return await Promise.all([tools.a({n: 1}), tools.b({n: 2})]);`,
			Tools: []string{"a", "b"}, World: &World{Seed: 3},
			Suspend: func(Quiescence) bool { return true },
		}, d)
		if err != nil || out.Suspended == nil {
			f.err = errors.Join(err, errors.New("not suspended"))
			return
		}
		f.snap = out.Suspended.Snapshot
		f.body = f.snap[bodyStart(f.snap):] // stored as is
	})
	require.NoError(t, f.err)
	return f.rt, f.snap, f.body
}

// bodyStart returns where the body of snapshot b (format 3) starts.
func bodyStart(b []byte) int { return headerSize + int(b[headerSize-1]) + headerTail }

func TestDecodeSnapshot_realSnapshot(t *testing.T) {
	rt, snap, _ := fixture(t)
	st, err := decodeSnapshot(rt.image, rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	require.Equal(t, []string{"before"}, st.meta.Logs)
	require.Len(t, st.meta.Pending, 2)
	require.Len(t, st.meta.Timers.Entries, 1)
	require.True(t, st.meta.World.Deterministic)
	require.NotEmpty(t, st.blocks)
	require.Less(t, len(st.blocks)*blockSize, int(st.pages)*pageSize, "only the blocks that differ from the image")
}

// wholeMemory rebuilds a decoded snapshot's memory, for encodeSnapshot.
func wholeMemory(img *image, st *snapshotState) []byte {
	mem := make([]byte, int(st.pages)*pageSize)
	copy(mem, img.memory)
	for i, b := range st.blocks {
		copy(mem[int(b)*blockSize:], st.data[i*blockSize:(i+1)*blockSize])
	}
	return mem
}

// encodeSnapshot writes into the buffer it is given when the buffer's
// capacity holds the snapshot, and leaves it untouched otherwise.
func TestEncodeSnapshot_buffer(t *testing.T) {
	rt, snap, _ := fixture(t)
	img := rt.image
	st, err := decodeSnapshot(img, rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	st.memory = wholeMemory(img, st)
	want, _, err := encodeSnapshot(img, st, nil, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		cap   int
		wrote bool
	}{
		{"below", len(want) - 1, false},
		{"at", len(want), true},
		{"past", len(want) + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := bytes.Repeat([]byte{0xa5}, tc.cap)
			b, _, err := encodeSnapshot(img, st, buf[:7], nil)
			require.NoError(t, err)
			require.Equal(t, want, b)
			require.Equal(t, tc.wrote, &b[0] == &buf[0], "written into the buffer")
			if !tc.wrote {
				require.Equal(t, bytes.Repeat([]byte{0xa5}, tc.cap), buf, "the buffer is left as it was")
			}
		})
	}
}

func TestEncodeSnapshot_metaBound(t *testing.T) {
	rt, snap, _ := fixture(t)
	img := rt.image
	st, err := decodeSnapshot(img, rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	st.memory = wholeMemory(img, st)
	meta, err := json.Marshal(&st.meta)
	require.NoError(t, err)
	defer func(n int) { MaxSnapshotMetaBytes = n }(MaxSnapshotMetaBytes)

	for _, tc := range []struct {
		name  string
		bound int
		ok    bool
	}{
		{"above", len(meta) + 1, true},
		{"at", len(meta), true},
		{"below", len(meta) - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			MaxSnapshotMetaBytes = tc.bound
			b, _, err := encodeSnapshot(img, st, nil, nil)
			if !tc.ok {
				require.ErrorContains(t, err, "over the")
				require.ErrorContains(t, err, "wasmhost.MaxSnapshotMetaBytes")
				return
			}
			require.NoError(t, err)
			again, err := decodeSnapshot(img, rt.limits.MemoryBytes, b)
			require.NoError(t, err)
			require.Equal(t, st.meta, again.meta)
			require.Equal(t, st.blocks, again.blocks)
		})
	}

	// A snapshot made under a larger bound is refused under a smaller one.
	MaxSnapshotMetaBytes = len(meta)
	b, _, err := encodeSnapshot(img, st, nil, nil)
	require.NoError(t, err)
	MaxSnapshotMetaBytes = len(meta) - 1
	_, err = decodeSnapshot(img, rt.limits.MemoryBytes, b)
	require.ErrorIs(t, err, ErrSnapshot)
	require.ErrorContains(t, err, "table's length is out of range")
}

func TestRun_suspendPastTheMetaBound(t *testing.T) {
	rt, _, _ := fixture(t)
	defer func(n int) { MaxSnapshotMetaBytes = n }(MaxSnapshotMetaBytes)
	MaxSnapshotMetaBytes = 100
	_, err := rt.Run(context.Background(), Program{JS: `console.log("x".repeat(200)); return await tools.a({})`,
		Tools: []string{"a"}, Suspend: func(Quiescence) bool { return true }},
		DispatcherFunc(func(_ string, _ json.RawMessage, done func(CallResult)) { done(CallResult{OK: true}) }))
	var re *RunError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, api.KindAbort, re.Kind)
	require.Contains(t, re.Message, "the run could not be suspended: the run's table")
	require.Contains(t, re.Message, "over the 100 a snapshot holds")
}

func TestDecodeSnapshot_inflateBound(t *testing.T) {
	rt, stored, _ := fixture(t)
	snap, err := CompressSnapshot(stored)
	require.NoError(t, err)
	const memory = MinMemoryBytes * 4
	bound := maxInflated(memory)
	at := bodyStart(snap) - 16 // raw
	for _, tc := range []struct {
		name string
		raw  uint64
		msg  string
	}{
		{"below", uint64(bound) - 1, "does not declare the"},
		{"at", uint64(bound), "does not declare the"},
		{"past", uint64(bound) + 1, "over the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), snap...)
			binary.LittleEndian.PutUint64(b[at:], tc.raw)
			_, err := decodeSnapshot(rt.image, memory, b)
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestParseBody_refusesInconsistentTables(t *testing.T) {
	rt, _, body := fixture(t)
	metaLen := binary.LittleEndian.Uint32(body)
	var meta snapshotMeta
	require.NoError(t, json.Unmarshal(body[4:4+metaLen], &meta))
	cases := []struct {
		name string
		edit func(m *snapshotMeta)
		msg  string
	}{
		{"negative compute", func(m *snapshotMeta) { m.Compute = -1 }, "negative"},
		{"last id off", func(m *snapshotMeta) { m.LastID++ }, "does not match"},
		{"repeated call", func(m *snapshotMeta) { m.Pending[1].ID = m.Pending[0].ID }, "out of range or repeated"},
		{"unbound tool", func(m *snapshotMeta) { m.Pending[0].Name = "other" }, "not bound"},
		{"args size", func(m *snapshotMeta) { m.Pending[0].Size = 99 }, "arguments are out of range"},
		{"answer unanswered", func(m *snapshotMeta) { m.Pending[0].OK = true }, "has an answer"},
		{"logs count", func(m *snapshotMeta) { m.OutputUsed++ }, "logs take"},
		{"timer id", func(m *snapshotMeta) { m.Timers.Entries[0].ID = 99 }, "timer 99"},
		{"random source", func(m *snapshotMeta) { m.World.RNG = []byte("x") }, "random source"},
		{"globals", func(m *snapshotMeta) { m.Globals[0].Name = "other" }, "global 0"},
		{"limits", func(m *snapshotMeta) { m.Limits.MemoryBytes = 1 }, "limits are invalid"},
		{"nothing to wait on", func(m *snapshotMeta) { m.Pending, m.Timers.Entries = nil, nil }, "could never go on"},
		{"buffer", func(m *snapshotMeta) { m.BufPtr = 1 << 31 }, "exchange buffer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m snapshotMeta
			require.NoError(t, json.Unmarshal(body[4:4+metaLen], &m))
			tc.edit(&m)
			mj, err := json.Marshal(&m)
			require.NoError(t, err)
			b := binary.LittleEndian.AppendUint32(nil, uint32(len(mj)))
			b = append(append(b, mj...), body[4+metaLen:]...)
			_, err = parseBody(rt.image, rt.limits.MemoryBytes, b)
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	_, err := parseBody(rt.image, rt.limits.MemoryBytes, body)
	require.NoError(t, err, "the unedited body parses")
}

// syntheticSnapshot is a snapshot made without a guest, for the fuzz
// targets: an image of two pages, a memory of three with a block changed
// in each, two calls (one answered), a timer, logs and a deterministic
// world. Fuzzing then needs no Runtime (and none of its set-up time).
func syntheticSnapshot(t testing.TB) (*image, []byte, []byte) {
	img := &image{memory: make([]byte, 2*pageSize), globals: []string{"__stack_pointer"}}
	for i := range img.memory {
		img.memory[i] = byte(i * 7)
	}
	img.moduleHash = sha256.Sum256([]byte("a guest"))
	img.memoryHash = sha256.Sum256(img.memory)
	mem := make([]byte, 3*pageSize)
	copy(mem, img.memory)
	mem[10], mem[pageSize+5000], mem[2*pageSize+100] = 1, 2, 3
	var rng rand.ChaCha8
	rngState, err := rng.MarshalBinary()
	require.NoError(t, err)
	st := &snapshotState{memory: mem, meta: snapshotMeta{
		Limits: api.DefaultLimits(), Tools: []string{"a", "b"}, Compute: 5, Wall: 7, Calls: 2, LastID: 2,
		OutputUsed: 4, Logs: []string{"ab", "c"},
		Pending: []snapCall{{ID: 1, Name: "a", Args: []byte(`{}`), Size: 2, Answered: true, OK: true, Value: []byte(`1`)},
			{ID: 2, Name: "b", Args: []byte(`{"x":1}`), Size: 7}},
		Timers:  snapTimers{Last: 1, Entries: []snapTimer{{ID: 1, At: 100}}},
		World:   snapWorld{Deterministic: true, Seed: 1, RNG: rngState},
		Globals: []snapGlobal{{Name: "__stack_pointer", Value: 65536}},
	}}
	b, _, err := encodeSnapshot(img, st, nil, nil)
	require.NoError(t, err)
	return img, b, b[bodyStart(b):]
}

func TestDecodeSnapshot_synthetic(t *testing.T) {
	img, b, _ := syntheticSnapshot(t)
	st, err := decodeSnapshot(img, 1<<20, b)
	require.NoError(t, err)
	require.Equal(t, []uint32{0, 17, 32}, st.blocks)
	_, err = decodeSnapshot(img, 2*pageSize, b)
	require.ErrorContains(t, err, "over the memory limit of 131072 bytes")
}

// TestDecodeSnapshot_mutations decodes 2,000 random mutations of a real
// snapshot (bytes changed, cut short): each is refused with ErrSnapshot or
// decodes to a consistent state, and none panics.
func TestDecodeSnapshot_mutations(t *testing.T) {
	rt, stored, _ := fixture(t)
	compressed, err := CompressSnapshot(stored)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	refused := 0
	for i := range 2000 {
		snap := stored
		if i%2 == 1 {
			snap = compressed
		}
		b := append([]byte(nil), snap...)
		for range 1 + r.IntN(3) {
			b[r.IntN(len(b))] = byte(r.IntN(256))
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b))]
		}
		st, err := decodeSnapshot(rt.image, rt.limits.MemoryBytes, b)
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			refused++
			continue
		}
		requireConsistent(t, rt.image, rt.limits.MemoryBytes, st)
	}
	require.Positive(t, refused)
}

// The fuzz targets take a snapshot (or a body) cut before its memory's
// data, and a count of data blocks to append: the data is never more than
// copied, and leaving its kilobytes out of the input keeps each input
// small, so that the fuzzer's minimisation of an interesting input takes
// milliseconds instead of its whole budget.

// withBlocks is b followed by n%4 blocks of data.
func withBlocks(b []byte, n uint8) []byte {
	out := append([]byte(nil), b...)
	for i := range int(n % 4) {
		out = append(out, bytes.Repeat([]byte{byte(i + 1)}, blockSize)...)
	}
	return out
}

// FuzzDecodeSnapshot feeds the decoder arbitrary bytes, and snapshots
// mutated, stored and compressed: it must refuse or accept, never panic,
// and what it accepts must be consistent.
func FuzzDecodeSnapshot(f *testing.F) {
	img, snap, _ := syntheticSnapshot(f)
	compressed, err := CompressSnapshot(snap)
	require.NoError(f, err)
	f.Add(snap[:len(snap)-3*blockSize], uint8(3))
	f.Add(compressed, uint8(0))
	f.Add(snap[:bodyStart(snap)], uint8(0))
	f.Add([]byte(snapshotMagic), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, blocks uint8) {
		st, err := decodeSnapshot(img, 1<<20, withBlocks(b, blocks))
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		requireConsistent(t, img, 1<<20, st)
	})
}

// FuzzParseSnapshotBody does the same past the header, where a mutation of
// the table or the memory index is caught by nothing but the checks.
func FuzzParseSnapshotBody(f *testing.F) {
	img, _, body := syntheticSnapshot(f)
	f.Add(body[:len(body)-3*blockSize], uint8(3))
	f.Add(body[:200], uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, blocks uint8) {
		st, err := parseBody(img, 1<<20, withBlocks(b, blocks))
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		requireConsistent(t, img, 1<<20, st)
	})
}

func requireConsistent(t *testing.T, img *image, memoryBytes int64, st *snapshotState) {
	require.Len(t, st.data, len(st.blocks)*blockSize)
	require.LessOrEqual(t, int64(st.pages)*pageSize, memoryBytes)
	require.GreaterOrEqual(t, int(st.pages)*pageSize, len(img.memory))
	for i := 1; i < len(st.blocks); i++ {
		require.Less(t, st.blocks[i-1], st.blocks[i])
	}
	require.LessOrEqual(t, len(st.meta.Pending), st.meta.Limits.MaxPendingCalls)
}

// formatOne is snapshot b (format 3, compressed) laid out in format 1: no
// codec byte and no checksum.
func formatOne(t *testing.T, b []byte) []byte {
	t.Helper()
	h, err := readHeader(b)
	require.NoError(t, err)
	require.Equal(t, byte(codecZstd), h.codec)
	out := append([]byte(nil), b[:bodyStart(b)-headerTail]...)
	binary.LittleEndian.PutUint16(out[len(snapshotMagic):], snapshotFormatZstd)
	out = binary.LittleEndian.AppendUint64(out, h.raw)
	return append(out, b[h.bodyAt:]...)
}

// formatTwo is snapshot b (format 3) laid out in format 2: its check the
// CRC-32C of its body, a u32.
func formatTwo(t *testing.T, b []byte) []byte {
	t.Helper()
	h, err := readHeader(b)
	require.NoError(t, err)
	out := append([]byte(nil), b[:bodyStart(b)-headerTail]...)
	binary.LittleEndian.PutUint16(out[len(snapshotMagic):], snapshotFormatCRC)
	out = append(out, h.codec)
	out = binary.LittleEndian.AppendUint64(out, h.raw)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(b[h.bodyAt:], castagnoli))
	return append(out, b[h.bodyAt:]...)
}

func TestDecodeSnapshot_codecs(t *testing.T) {
	rt, stored, _ := fixture(t)
	compressed, err := CompressSnapshot(stored)
	require.NoError(t, err)
	want, err := decodeSnapshot(rt.image, rt.limits.MemoryBytes, stored)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"stored", stored},
		{"compressed", compressed},
		{"format 1", formatOne(t, compressed)},
		{"format 2, stored", formatTwo(t, stored)},
		{"format 2, compressed", formatTwo(t, compressed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := decodeSnapshot(rt.image, rt.limits.MemoryBytes, tc.b)
			require.NoError(t, err)
			require.Equal(t, want.meta, st.meta)
			require.Equal(t, want.blocks, st.blocks)
			require.Equal(t, want.data, st.data)
		})
	}
	require.Less(t, len(compressed), len(stored))
}

func TestDecodeSnapshot_formatTwoCorrupt(t *testing.T) {
	rt, stored, _ := fixture(t)
	two := formatTwo(t, stored)
	two[len(two)-20] ^= 0x40
	_, err := decodeSnapshot(rt.image, rt.limits.MemoryBytes, two)
	require.ErrorIs(t, err, ErrSnapshot)
	require.ErrorContains(t, err, "its body is corrupt: its checksum is")
}

func TestCompressSnapshot(t *testing.T) {
	_, stored, _ := fixture(t)
	compressed, err := CompressSnapshot(stored)
	require.NoError(t, err)
	again, err := CompressSnapshot(compressed)
	require.NoError(t, err)
	require.Equal(t, compressed, again, "a compressed snapshot is returned as it is")

	short := append([]byte(nil), stored[:len(stored)-blockSize]...)
	h, err := readHeader(stored)
	require.NoError(t, err)
	seal(short, h.bodyAt)
	for _, tc := range []struct {
		name string
		b    []byte
		msg  string
	}{
		{"not a snapshot", []byte("not a snapshot, not at all, not one bit of it, no, not even close to one"), "not a ptcx snapshot"},
		{"corrupt", stored[:len(stored)-1], "its body is corrupt"},
		{"shorter than declared", short, "not the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompressSnapshot(tc.b)
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

func TestDecodeSnapshot_zstdWindowBound(t *testing.T) {
	img, _, _ := syntheticSnapshot(t)
	// A single-segment frame's window is its whole content: bodies of
	// zeros, not valid ones, since the window is checked first.
	for _, tc := range []struct {
		name string
		size int
		ok   bool
	}{
		{"below", zstdWindow - 1, true},
		{"at", zstdWindow, true},
		{"past", zstdWindow + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
			require.NoError(t, err)
			out := appendHeader(nil, img.moduleHash[:], img.memoryHash[:], "test", codecZstd, uint64(tc.size))
			at := len(out)
			out = enc.EncodeAll(make([]byte, tc.size), out)
			seal(out, at)
			_, err = decodeSnapshot(img, 4<<20, out)
			require.ErrorIs(t, err, ErrSnapshot)
			if tc.ok {
				require.NotContains(t, err.Error(), "zstd window")
				return
			}
			require.ErrorContains(t, err, "zstd window of 1048577 bytes is over the 1048576")
		})
	}
}
