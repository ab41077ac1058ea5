package wasmhost

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// heapSnapshot runs js, which waits on one call, suspended there, and
// returns its snapshot decoded.
func heapSnapshot(t *testing.T, rt *Runtime, js string) *snapshot.State {
	t.Helper()
	out, err := rt.Run(context.Background(), Program{JS: js, Tools: []string{"a"}, Suspend: func(Quiescence) bool { return true }},
		DispatcherFunc(func(_ string, _ json.RawMessage, done func(CallResult)) { done(CallResult{OK: true}) }))
	require.NoError(t, err)
	require.NotNil(t, out.Suspended)
	st, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, out.Suspended.Snapshot)
	require.NoError(t, err)
	return st
}

// A resumed instance shows nothing of the run whose memory it is
// restored into: its memory is byte for byte the image with the
// snapshot's blocks written over it, and reads as zeros past it as it
// grows, after a run that filled every byte of the same memory (and more)
// with a marker. On every engine: on those whose memory is not the host's
// reservation there is no resume spare, and the check holds all the same.
// Both for a bare spare and for one readied ahead of the resume (its
// instance restored from the image while the spare waited).
func TestRuntime_Resume_spareIsolation(t *testing.T) {
	ctx := context.Background()
	for _, engine := range Engines() {
		for _, ready := range []bool{false, true} {
			name := engine + "/bare"
			if ready {
				name = engine + "/readied"
			}
			t.Run(name, func(t *testing.T) { spareIsolation(t, ctx, engine, ready) })
		}
	}
}

func spareIsolation(t *testing.T, ctx context.Context, engine string, ready bool) {
	for _, pool := range []int{0, 2} {
		rt, err := New(ctx, NewConfig().WithEngine(engine).WithPool(pool))
		require.NoError(t, err)
		t.Cleanup(func() { rt.Close(ctx) })
		rt.resumeSpares.bare = !ready
		big := heapSnapshot(t, rt, heldHeaps[0].js)
		small := heapSnapshot(t, rt, `globalThis.s = "y".repeat(600000); return (await tools.a({})) + s.length;`)
		objects := heapSnapshot(t, rt, heldHeaps[1].js)
		marker := bytes.Repeat([]byte{0xA5}, 1<<20)
		prev := big
		for i, st := range []*snapshot.State{big, small, big, objects, small, objects} {
			// The run before filled its memory, grown 64 pages more,
			// with the marker; then its instance closed.
			r := &run{rt: rt, limits: rt.limits, ctx: ctx, resuming: prev}
			inst, err := r.restoreSnapshot()
			require.NoError(t, err)
			_, ok := inst.mem.Grow(64)
			require.True(t, ok)
			for off := uint32(0); off < inst.mem.Size(); off += uint32(len(marker)) {
				n := min(uint32(len(marker)), inst.mem.Size()-off)
				require.True(t, inst.mem.Write(off, marker[:n]))
			}
			spared := inst.memory.mapped != nil
			inst.close(ctx)
			if n, _ := rt.resumeSpareStats(); spared {
				require.Positive(t, n, "the resumed memory is kept as a resume spare")
			} else {
				require.Zero(t, n, "no reservation of the host's: no resume spare")
			}

			if spared && ready {
				waitResumeSparesReady(t, rt)
			}
			kept, _ := rt.resumeSpareStats()
			taken := rt.resumeSpares.taken.Load()
			r = &run{rt: rt, limits: rt.limits, ctx: ctx, resuming: st}
			inst, err = r.restoreSnapshot()
			require.NoError(t, err)
			if left, _ := rt.resumeSpareStats(); spared {
				require.Equal(t, kept-1, left, "step %d: resumed into the resume spare", i)
				if ready {
					require.Equal(t, taken+1, rt.resumeSpares.taken.Load(), "step %d: into its readied instance", i)
				}
			}
			got, ok := inst.mem.Read(0, inst.mem.Size())
			require.True(t, ok)
			want := wholeMemory(rt.image, st)
			require.Equal(t, len(want), len(got), "step %d", i)
			require.True(t, bytes.Equal(want, got), "step %d: the memory is not the image and the snapshot's blocks alone", i)
			require.False(t, bytes.Contains(got, marker[:64]), "step %d: the previous run's marker survived", i)
			size := inst.mem.Size()
			_, ok = inst.mem.Grow(128)
			require.True(t, ok)
			grown, ok := inst.mem.Read(size, inst.mem.Size()-size)
			require.True(t, ok)
			require.True(t, allZeroBytes(grown), "step %d: the memory reads as zeros as it grows", i)
			inst.close(ctx)
			prev = st
		}
	}
}

// waitResumeSparesReady waits until every resume spare of rt has its
// instance restored (readyResumeSpares).
func waitResumeSparesReady(t *testing.T, rt *Runtime) {
	t.Helper()
	require.Eventually(t, func() bool {
		sp := &rt.resumeSpares
		sp.mu.Lock()
		defer sp.mu.Unlock()
		return !slices.ContainsFunc(sp.list, func(s resumeSpare) bool { return s.inst == nil })
	}, 20*time.Second, time.Millisecond, "the resume spares are readied")
}

func allZeroBytes(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// A resumed memory is kept as a resume spare when it grew past the image
// and is at most maxResumeSpareBytes; the Runtime keeps resumeSpareCount
// of them, the newest, each charged to admission for its size.
func TestRuntime_keepResumeSpare_bounds(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	rt.resumeSpares.bare = true // the list alone: readied spares are TestRuntime_Resume_readiedSpares'
	img := len(rt.image.memory)
	res := func(used int) resumeSpare {
		b, ok := vmem.Reserve(uint64(max(used, img)), 0)
		require.True(t, ok, "a reservation (Linux)")
		return resumeSpare{mem: b, used: used}
	}
	keep := func(s resumeSpare) bool {
		ok := rt.keepResumeSpare(s)
		if !ok {
			vmem.Release(s.mem)
		}
		return ok
	}
	before := rt.pooledBytes
	require.False(t, keep(res(img)), "no larger than the image: the pool's to keep")
	require.True(t, keep(res(img+abi.PageSize)), "past the image")
	require.True(t, keep(res(maxResumeSpareBytes)), "at the bound")
	require.False(t, keep(res(maxResumeSpareBytes+abi.PageSize)), "past the bound")
	require.Equal(t, before+int64(img+abi.PageSize+maxResumeSpareBytes), rt.pooledBytes, "charged for their sizes")
	count := rt.resumeSpareCount()
	require.Equal(t, min(resumeSpareCount, 2*rt.slots.MaxCount()), count)
	for range count {
		require.True(t, keep(res(img+2*abi.PageSize)))
	}
	n, bytes := rt.resumeSpareStats()
	require.Equal(t, count, n, "at the count: the oldest gave way")
	require.Equal(t, int64(count*(img+2*abi.PageSize)), bytes)
	require.Equal(t, before+bytes, rt.pooledBytes)

	_, ok := rt.takeResumeSpare(img+3*abi.PageSize, 0)
	require.False(t, ok, "none covers it")
	s, ok := rt.takeResumeSpare(img+2*abi.PageSize, 0)
	require.True(t, ok, "one covers it")
	vmem.Release(s.mem)
	for rt.yieldResumeSpare() {
	}
	require.Equal(t, before, rt.pooledBytes, "yielded: uncharged")
	rt.closeResumeSpares()
	require.False(t, keep(res(img+abi.PageSize)), "closed")
}

func TestGaps_theRunsTheBlocksLeave(t *testing.T) {
	for _, tc := range []struct {
		name     string
		blocks   []uint32
		from, to int
		want     [][2]int
	}{
		{"no blocks", nil, 0, 8, [][2]int{{0, 8}}},
		{"every block", []uint32{0, 1, 2, 3}, 0, 4, nil},
		{"a gap in the middle", []uint32{0, 1, 5, 6, 7}, 0, 8, [][2]int{{2, 5}}},
		{"gaps at both ends", []uint32{3, 4}, 0, 8, [][2]int{{0, 3}, {5, 8}}},
		{"blocks below from are not gaps", []uint32{0, 1, 2, 9}, 4, 12, [][2]int{{4, 9}, {10, 12}}},
		{"blocks at and past to are ignored", []uint32{2, 8, 9}, 0, 8, [][2]int{{0, 2}, {3, 8}}},
		{"a block at from", []uint32{4}, 4, 6, [][2]int{{5, 6}}},
		{"an empty range", []uint32{1}, 5, 5, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, gaps(tc.blocks, tc.from, tc.to))
		})
	}
}
