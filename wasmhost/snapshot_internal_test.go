package wasmhost

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
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
	body []byte // snap's body, inflated
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
		dec, err := zstd.NewReader(nil)
		if err != nil {
			f.err = err
			return
		}
		defer dec.Close()
		f.body, f.err = dec.DecodeAll(f.snap[bodyStart(f.snap):], nil)
	})
	require.NoError(t, f.err)
	return f.rt, f.snap, f.body
}

// bodyStart returns where the body of snapshot b starts.
func bodyStart(b []byte) int { return headerSize + int(b[headerSize-1]) + 8 }

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
			b, _, err := encodeSnapshot(img, st)
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
	b, _, err := encodeSnapshot(img, st)
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
	rt, snap, _ := fixture(t)
	const memory = MinMemoryBytes * 4
	bound := maxInflated(memory)
	at := bodyStart(snap) - 8
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
	b, _, err := encodeSnapshot(img, st)
	require.NoError(t, err)
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	body, err := dec.DecodeAll(b[bodyStart(b):], nil)
	require.NoError(t, err)
	return img, b, body
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
	rt, snap, _ := fixture(t)
	r := rand.New(rand.NewPCG(1, 2))
	refused := 0
	for range 2000 {
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

// FuzzDecodeSnapshot feeds the decoder arbitrary bytes, and a snapshot
// mutated: it must refuse or accept, never panic, and what it accepts must
// be consistent.
func FuzzDecodeSnapshot(f *testing.F) {
	img, snap, _ := syntheticSnapshot(f)
	f.Add(snap)
	f.Add(snap[:bodyStart(snap)])
	f.Add([]byte(snapshotMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeSnapshot(img, 1<<20, b)
		if err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			return
		}
		requireConsistent(t, img, 1<<20, st)
	})
}

// FuzzParseSnapshotBody does the same past the compression, where a
// mutation of the table or the memory index is not caught by zstd's
// checksum.
func FuzzParseSnapshotBody(f *testing.F) {
	img, _, body := syntheticSnapshot(f)
	f.Add(body)
	f.Add(body[:200])
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseBody(img, 1<<20, b)
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
