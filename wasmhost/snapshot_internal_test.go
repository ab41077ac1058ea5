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
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
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

// bodyStart returns where the body of snapshot b (format 4) starts.
func bodyStart(b []byte) int {
	return snapshot.HeaderSize + int(b[snapshot.HeaderSize-1]) + snapshot.HeaderTail
}

func TestDecodeSnapshot_realSnapshot(t *testing.T) {
	rt, snap, _ := fixture(t)
	st, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	require.Equal(t, []string{"before"}, st.Meta.Logs)
	require.Len(t, st.Meta.Pending, 2)
	require.Len(t, st.Meta.Timers.Entries, 1)
	require.True(t, st.Meta.World.Deterministic)
	require.NotEmpty(t, st.Blocks)
	require.Less(t, len(st.Blocks)*snapshot.BlockSize, int(st.Pages)*abi.PageSize, "only the blocks that differ from the image")
}

// wholeMemory rebuilds a decoded snapshot's memory, for encodeSnapshot.
func wholeMemory(img *image, st *snapshot.State) []byte {
	mem := make([]byte, int(st.Pages)*abi.PageSize)
	copy(mem, img.memory)
	for i, b := range st.Blocks {
		copy(mem[int(b)*snapshot.BlockSize:], st.Data[i*snapshot.BlockSize:(i+1)*snapshot.BlockSize])
	}
	return mem
}

// encodeSnapshot writes into the buffer it is given when the buffer's
// capacity holds the snapshot, and into a buffer of its own otherwise
// (having written into the one given until it ran out).
func TestEncodeSnapshot_buffer(t *testing.T) {
	rt, snap, _ := fixture(t)
	img := rt.image
	st, err := snapshot.Decode(img.base(), rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	st.Memory = wholeMemory(img, st)
	want, _, err := snapshot.Encode(img.base(), st, nil, nil, nil)
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
			b, _, err := snapshot.Encode(img.base(), st, buf[:7], nil, nil)
			require.NoError(t, err)
			require.Equal(t, want, b)
			require.Equal(t, tc.wrote, &b[0] == &buf[0], "written into the buffer")
		})
	}
}

// A buffer taken from the free list that turns out too small for the
// snapshot is given back; one that holds it is written into.
func TestEncodeSnapshot_takeAndGive(t *testing.T) {
	rt, snap, _ := fixture(t)
	img := rt.image
	st, err := snapshot.Decode(img.base(), rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	st.Memory = wholeMemory(img, st)
	want, _, err := snapshot.Encode(img.base(), st, nil, nil, nil)
	require.NoError(t, err)
	most := len(want) + (len(st.Memory)/snapshot.BlockSize-len(st.Blocks))*(snapshot.BlockSize+4)
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
			buf := make([]byte, 0, tc.cap)
			var asked int
			var given [][]byte
			b, _, err := snapshot.Encode(img.base(), st, nil, func(size int) []byte { asked = size; return buf },
				func(b []byte) { given = append(given, b) })
			require.NoError(t, err)
			require.Equal(t, want, b)
			require.Equal(t, most, asked, "asked for the whole memory's blocks")
			require.Equal(t, tc.wrote, &b[0] == &buf[:1][0], "written into the buffer taken")
			if tc.wrote {
				require.Empty(t, given)
				return
			}
			require.Len(t, given, 1, "the buffer taken is given back")
			require.Same(t, &buf[:1][0], &given[0][:1][0])
			require.GreaterOrEqual(t, cap(b), len(want))
			require.LessOrEqual(t, cap(b), len(want)+len(want)/snapshot.Slack+snapshot.BlockSize, "the buffer made is the snapshot's size")
		})
	}
}

func TestEncodeSnapshot_metaBound(t *testing.T) {
	rt, snap, _ := fixture(t)
	img := rt.image
	st, err := snapshot.Decode(img.base(), rt.limits.MemoryBytes, snap)
	require.NoError(t, err)
	st.Memory = wholeMemory(img, st)
	meta, err := json.Marshal(&st.Meta)
	require.NoError(t, err)
	defer snapshot.SetMaxMeta(MaxSnapshotMetaBytes)

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
			snapshot.SetMaxMeta(tc.bound)
			b, _, err := snapshot.Encode(img.base(), st, nil, nil, nil)
			if !tc.ok {
				require.ErrorContains(t, err, "over the")
				require.ErrorContains(t, err, "wasmhost.MaxSnapshotMetaBytes")
				return
			}
			require.NoError(t, err)
			again, err := snapshot.Decode(img.base(), rt.limits.MemoryBytes, b)
			require.NoError(t, err)
			require.Equal(t, st.Meta, again.Meta)
			require.Equal(t, st.Blocks, again.Blocks)
		})
	}

	// A snapshot made under a larger bound is refused under a smaller one.
	snapshot.SetMaxMeta(len(meta))
	b, _, err := snapshot.Encode(img.base(), st, nil, nil, nil)
	require.NoError(t, err)
	snapshot.SetMaxMeta(len(meta) - 1)
	_, err = snapshot.Decode(img.base(), rt.limits.MemoryBytes, b)
	require.ErrorIs(t, err, ErrSnapshot)
	require.ErrorContains(t, err, "table's length is out of range")
}

func TestRun_suspendPastTheMetaBound(t *testing.T) {
	rt, _, _ := fixture(t)
	defer snapshot.SetMaxMeta(MaxSnapshotMetaBytes)
	snapshot.SetMaxMeta(100)
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
	const memory = api.MinMemoryBytes * 4
	bound := snapshot.MaxInflated(memory)
	at := bodyStart(snap) - 24 // raw
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
			_, err := snapshot.Decode(rt.image.base(), memory, b)
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// noCheck passes a body's table unchecked: for the tests and fuzz targets
// of what is checked past it.
func noCheck(snapshot.BodyLayout) error { return nil }

func TestParseBody_refusesInconsistentTables(t *testing.T) {
	rt, _, body := fixture(t)
	metaLen := binary.LittleEndian.Uint32(body)
	var meta snapshot.Meta
	require.NoError(t, json.Unmarshal(body[4:4+metaLen], &meta))
	cases := []struct {
		name string
		edit func(m *snapshot.Meta)
		msg  string
	}{
		{"negative compute", func(m *snapshot.Meta) { m.Compute = -1 }, "negative"},
		{"last id off", func(m *snapshot.Meta) { m.LastID++ }, "does not match"},
		{"repeated call", func(m *snapshot.Meta) { m.Pending[1].ID = m.Pending[0].ID }, "out of range or repeated"},
		{"unbound tool", func(m *snapshot.Meta) { m.Pending[0].Name = "other" }, "not bound"},
		{"args size", func(m *snapshot.Meta) { m.Pending[0].Size = 99 }, "arguments are out of range"},
		{"answer unanswered", func(m *snapshot.Meta) { m.Pending[0].OK = true }, "has an answer"},
		{"handle unanswered", func(m *snapshot.Meta) { m.Pending[0].Handle = true }, "has an answer"},
		{"handle not a value", func(m *snapshot.Meta) { m.Pending[0].Answered, m.Pending[0].Handle = true, true }, "a handle that is not a value"},
		{"logs count", func(m *snapshot.Meta) { m.OutputUsed++ }, "logs take"},
		{"timer id", func(m *snapshot.Meta) { m.Timers.Entries[0].ID = 99 }, "timer 99"},
		{"random source", func(m *snapshot.Meta) { m.World.RNG = []byte("x") }, "random source"},
		{"globals", func(m *snapshot.Meta) { m.Globals[0].Name = "other" }, "global 0"},
		{"limits", func(m *snapshot.Meta) { m.Limits.MemoryBytes = 1 }, "limits are invalid"},
		{"nothing to wait on", func(m *snapshot.Meta) { m.Pending, m.Timers.Entries = nil, nil }, "could never go on"},
		{"buffer", func(m *snapshot.Meta) { m.BufPtr = 1 << 31 }, "exchange buffer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m snapshot.Meta
			require.NoError(t, json.Unmarshal(body[4:4+metaLen], &m))
			tc.edit(&m)
			mj, err := json.Marshal(&m)
			require.NoError(t, err)
			b := binary.LittleEndian.AppendUint32(nil, uint32(len(mj)))
			b = append(append(b, mj...), body[4+metaLen:]...)
			_, err = snapshot.ParseBody4(rt.image.base(), rt.limits.MemoryBytes, b, noCheck)
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	_, err := snapshot.ParseBody4(rt.image.base(), rt.limits.MemoryBytes, body, noCheck)
	require.NoError(t, err, "the unedited body parses")
}

// syntheticSnapshot is a snapshot made without a guest, for the fuzz
// targets: an image of two pages, a memory of three with a block changed
// in each, two calls (one answered), a timer, logs and a deterministic
// world. Fuzzing then needs no Runtime (and none of its set-up time).
func syntheticSnapshot(t testing.TB) (*image, []byte, []byte) {
	img := &image{memory: make([]byte, 2*abi.PageSize), globals: []string{"__stack_pointer"}}
	for i := range img.memory {
		img.memory[i] = byte(i * 7)
	}
	img.moduleHash = sha256.Sum256([]byte("a guest"))
	img.memoryHash = sha256.Sum256(img.memory)
	mem := make([]byte, 3*abi.PageSize)
	copy(mem, img.memory)
	mem[10], mem[abi.PageSize+5000], mem[2*abi.PageSize+100] = 1, 2, 3
	var rng rand.ChaCha8
	rngState, err := rng.MarshalBinary()
	require.NoError(t, err)
	st := &snapshot.State{Memory: mem, Meta: snapshot.Meta{
		Limits: api.DefaultLimits(), Tools: []string{"a", "b"}, Compute: 5, Wall: 7, Calls: 2, LastID: 2,
		OutputUsed: 4, Logs: []string{"ab", "c"},
		Pending: []snapshot.Call{{ID: 1, Name: "a", Args: []byte(`{}`), Size: 2, Answered: true, OK: true, Value: []byte(`1`)},
			{ID: 2, Name: "b", Args: []byte(`{"x":1}`), Size: 7}},
		Timers:  snapshot.Timers{Last: 1, Entries: []snapshot.Timer{{ID: 1, At: 100}}},
		World:   world.State{Deterministic: true, Seed: 1, RNG: rngState},
		Globals: []snapshot.Global{{Name: "__stack_pointer", Value: 65536}},
	}}
	b, _, err := snapshot.Encode(img.base(), st, nil, nil, nil)
	require.NoError(t, err)
	return img, b, b[bodyStart(b):]
}

func TestDecodeSnapshot_synthetic(t *testing.T) {
	img, b, _ := syntheticSnapshot(t)
	st, err := snapshot.Decode(img.base(), 1<<20, b)
	require.NoError(t, err)
	require.Equal(t, []uint32{0, 17, 32}, st.Blocks)
	_, err = snapshot.Decode(img.base(), 2*abi.PageSize, b)
	require.ErrorContains(t, err, "over the memory limit of 131072 bytes")
}

// TestDecodeSnapshot_mutations decodes 2,000 random mutations of a real
// snapshot (bytes changed, cut short) and writes the blocks of those it
// decodes: each is refused with ErrSnapshot, by the decoder or by the
// write, or is the snapshot itself (a byte changed to what it was), and
// none panics.
func TestDecodeSnapshot_mutations(t *testing.T) {
	rt, stored, _ := fixture(t)
	compressed, err := CompressSnapshot(stored)
	require.NoError(t, err)
	want, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, stored)
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
		st, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, b)
		if err == nil {
			requireConsistent(t, rt.image, rt.limits.MemoryBytes, st)
			err = snapshot.WriteBlocks(st, func(uint32, []byte) bool { return true })
		}
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			refused++
			continue
		}
		require.Equal(t, want.Meta, st.Meta)
		require.Equal(t, want.Blocks, st.Blocks)
		require.Equal(t, want.Data, st.Data)
	}
	require.Positive(t, refused)
}

// The fuzz targets take a snapshot (or a body) without its memory's data,
// and a count of data blocks to put back where the data goes (withData):
// the data is never more than hashed and copied, and leaving its
// kilobytes out of the input keeps each input small, so that the fuzzer's
// minimisation of an interesting input takes milliseconds instead of its
// whole budget.

// withoutData is format-4 body b without its blocks' data.
func withoutData(t testing.TB, b []byte) []byte {
	l, err := snapshot.Layout4(b)
	require.NoError(t, err)
	return append(append([]byte(nil), b[:l.DataAt]...), b[l.IndexAt:]...)
}

// withData is body b with n%4 blocks of data put after its pages, where a
// format-4 body's data goes (or at its end, when b is too short to say
// where that is).
func withData(b []byte, n uint8) []byte {
	at := len(b)
	if len(b) >= 4 {
		if metaLen := int64(binary.LittleEndian.Uint32(b)); metaLen+8 <= int64(len(b)) {
			at = int(metaLen) + 8
		}
	}
	out := append([]byte(nil), b[:at]...)
	for i := range int(n % 4) {
		out = append(out, bytes.Repeat([]byte{byte(i + 1)}, snapshot.BlockSize)...)
	}
	return append(out, b[at:]...)
}

// withSnapshotData is snapshot b with withData applied to its body, when
// it has a header of format 4's layout.
func withSnapshotData(b []byte, n uint8) []byte {
	if len(b) < snapshot.HeaderSize {
		return withData(b, n)
	}
	at := bodyStart(b)
	if at > len(b) {
		return withData(b, n)
	}
	return append(append([]byte(nil), b[:at]...), withData(b[at:], n)...)
}

// FuzzDecodeSnapshot feeds the decoder arbitrary bytes, and snapshots
// mutated, stored and compressed, of formats 4 and 3: it must refuse or
// accept, never panic, and what it accepts must be consistent.
func FuzzDecodeSnapshot(f *testing.F) {
	img, snap, body := syntheticSnapshot(f)
	compressed, err := CompressSnapshot(snap)
	require.NoError(f, err)
	st, err := snapshot.Decode(img.base(), 1<<20, snap)
	require.NoError(f, err)
	st.Memory = wholeMemory(img, st)
	v3 := encodeSnapshotV3(f, img, st)
	f.Add(append(snap[:bodyStart(snap):bodyStart(snap)], withoutData(f, body)...), uint8(3))
	f.Add(compressed, uint8(0))
	f.Add(snap[:bodyStart(snap)], uint8(0))
	f.Add(v3, uint8(0))
	f.Add([]byte(snapshot.Magic), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, blocks uint8) {
		st, err := snapshot.Decode(img.base(), 1<<20, withSnapshotData(b, blocks))
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		requireConsistent(t, img, 1<<20, st)
	})
}

// FuzzParseSnapshotBody does the same past the header, its table check
// passed (noCheck), where a mutation of the table or the memory index is
// caught by nothing but the checks of each field.
func FuzzParseSnapshotBody(f *testing.F) {
	img, _, body := syntheticSnapshot(f)
	f.Add(withoutData(f, body), uint8(3))
	f.Add(body[:200], uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, blocks uint8) {
		st, err := snapshot.ParseBody4(img.base(), 1<<20, withData(b, blocks), noCheck)
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		requireConsistent(t, img, 1<<20, st)
	})
}

// FuzzParseSnapshotBodyV3 does the same for the body of formats 1 to 3
// (the index before the data, which is at its end).
func FuzzParseSnapshotBodyV3(f *testing.F) {
	img, snap, _ := syntheticSnapshot(f)
	st, err := snapshot.Decode(img.base(), 1<<20, snap)
	require.NoError(f, err)
	st.Memory = wholeMemory(img, st)
	v3 := encodeSnapshotV3(f, img, st)
	body := v3[bodyStartV3(v3):]
	f.Add(body[:len(body)-3*snapshot.BlockSize], uint8(3))
	f.Add(body[:200], uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, blocks uint8) {
		out := append([]byte(nil), b...)
		for i := range int(blocks % 4) {
			out = append(out, bytes.Repeat([]byte{byte(i + 1)}, snapshot.BlockSize)...)
		}
		st, err := snapshot.ParseBody(img.base(), 1<<20, out)
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		requireConsistent(t, img, 1<<20, st)
	})
}

// FuzzWriteSnapshotBlocks decodes arbitrary snapshots and writes the
// blocks of those it accepts into a memory of their size, checking them
// as a resume does: the write refuses (ErrSnapshot) or writes exactly the
// blocks decoded, never panics, and never writes outside the memory.
func FuzzWriteSnapshotBlocks(f *testing.F) {
	img, snap, body := syntheticSnapshot(f)
	compressed, err := CompressSnapshot(snap)
	require.NoError(f, err)
	f.Add(snap, uint8(0))
	f.Add(compressed, uint8(0))
	f.Add(append(snap[:bodyStart(snap):bodyStart(snap)], withoutData(f, body)...), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, blocks uint8) {
		st, err := snapshot.Decode(img.base(), 1<<20, withSnapshotData(b, blocks))
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		mem := make([]byte, int(st.Pages)*abi.PageSize)
		err = snapshot.WriteBlocks(st, func(off uint32, b []byte) bool {
			if int(off)+len(b) > len(mem) {
				return false
			}
			copy(mem[off:], b)
			return true
		})
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		for i, blk := range st.Blocks {
			require.Equal(t, st.Data[i*snapshot.BlockSize:(i+1)*snapshot.BlockSize], mem[int(blk)*snapshot.BlockSize:int(blk+1)*snapshot.BlockSize])
		}
	})
}

func requireConsistent(t *testing.T, img *image, memoryBytes int64, st *snapshot.State) {
	require.Len(t, st.Data, len(st.Blocks)*snapshot.BlockSize)
	require.LessOrEqual(t, int64(st.Pages)*abi.PageSize, memoryBytes)
	require.GreaterOrEqual(t, int(st.Pages)*abi.PageSize, len(img.memory))
	for i := 1; i < len(st.Blocks); i++ {
		require.Less(t, st.Blocks[i-1], st.Blocks[i])
	}
	require.LessOrEqual(t, len(st.Meta.Pending), st.Meta.Limits.MaxPendingCalls)
}

// formatOne is snapshot b (format 3, compressed) laid out in format 1: no
// codec byte and no checksum.
func formatOne(t *testing.T, b []byte) []byte {
	t.Helper()
	h, err := snapshot.ReadHeader(b)
	require.NoError(t, err)
	require.Equal(t, byte(snapshot.CodecZstd), h.Codec)
	out := append([]byte(nil), b[:bodyStartV3(b)-17]...)
	binary.LittleEndian.PutUint16(out[len(snapshot.Magic):], snapshot.FormatZstd)
	out = binary.LittleEndian.AppendUint64(out, h.Raw)
	return append(out, b[h.BodyAt:]...)
}

// formatTwo is snapshot b (format 3) laid out in format 2: its check the
// CRC-32C of its body, a u32.
func formatTwo(t *testing.T, b []byte) []byte {
	t.Helper()
	h, err := snapshot.ReadHeader(b)
	require.NoError(t, err)
	out := append([]byte(nil), b[:bodyStartV3(b)-17]...)
	binary.LittleEndian.PutUint16(out[len(snapshot.Magic):], snapshot.FormatCRC)
	out = append(out, h.Codec)
	out = binary.LittleEndian.AppendUint64(out, h.Raw)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(b[h.BodyAt:], snapshot.Castagnoli))
	return append(out, b[h.BodyAt:]...)
}

func TestDecodeSnapshot_codecs(t *testing.T) {
	rt, stored, _ := fixture(t)
	compressed, err := CompressSnapshot(stored)
	require.NoError(t, err)
	_, v3 := snapshotV3(t)
	v3z, err := CompressSnapshot(v3)
	require.NoError(t, err)
	want, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, stored)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"stored", stored},
		{"compressed", compressed},
		{"format 3, stored", v3},
		{"format 3, compressed", v3z},
		{"format 1", formatOne(t, v3z)},
		{"format 2, stored", formatTwo(t, v3)},
		{"format 2, compressed", formatTwo(t, v3z)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, tc.b)
			require.NoError(t, err)
			require.Equal(t, want.Meta, st.Meta)
			require.Equal(t, want.Blocks, st.Blocks)
			require.Equal(t, want.Data, st.Data)
		})
	}
	require.Less(t, len(compressed), len(stored))
	h, err := snapshot.ReadHeader(v3z)
	require.NoError(t, err)
	require.Equal(t, uint16(snapshot.FormatHash), h.Format, "a snapshot of format 3 compresses to format 3")
}

func TestDecodeSnapshot_formatTwoCorrupt(t *testing.T) {
	rt, v3 := snapshotV3(t)
	two := formatTwo(t, v3)
	two[len(two)-20] ^= 0x40
	_, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, two)
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

	corrupt := append([]byte(nil), stored...)
	corrupt[bodyStart(stored)+10] ^= 1 // in the table
	_, v3 := snapshotV3(t)
	for _, tc := range []struct {
		name string
		b    []byte
		msg  string
	}{
		{"not a snapshot", []byte("not a snapshot, not at all, not one bit of it, no, not even close to one"), "not a ptcx snapshot"},
		{"corrupt", corrupt, "its header, table or index is corrupt"},
		{"shorter than declared", stored[:len(stored)-snapshot.BlockSize], "not the"},
		{"format 3, corrupt", v3[:len(v3)-1], "its body is corrupt"},
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
		{"below", snapshot.ZstdWindow - 1, true},
		{"at", snapshot.ZstdWindow, true},
		{"past", snapshot.ZstdWindow + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
			require.NoError(t, err)
			out := snapshot.AppendHeader(nil, snapshot.Format, img.moduleHash[:], img.memoryHash[:], "test", snapshot.CodecZstd, uint64(tc.size))
			out = enc.EncodeAll(make([]byte, tc.size), out)
			_, err = snapshot.Decode(img.base(), 4<<20, out)
			require.ErrorIs(t, err, ErrSnapshot)
			if tc.ok {
				require.NotContains(t, err.Error(), "zstd window")
				return
			}
			require.ErrorContains(t, err, "zstd window of 1048577 bytes is over the 1048576")
		})
	}
}
