package wasmhost

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// bufferRuntime returns a Runtime for the free list's tests, closed when
// the test ends.
func bufferRuntime(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	rt, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	return rt
}

// okTools answers every call at once with its arguments.
var okTools = DispatcherFunc(func(_ string, args json.RawMessage, done func(CallResult)) {
	done(CallResult{OK: true, Value: args})
})

// suspendHeap runs a program holding n bytes of a string made of tag, and
// waiting on one call, suspended there.
func suspendHeap(t *testing.T, rt *Runtime, tag string, n int) *Suspended {
	t.Helper()
	js := fmt.Sprintf(`globalThis.big = %q.repeat(%d); const a = await tools.a({}); return big.slice(0, %d) + ":" + big.length;`,
		tag, n/len(tag), len(tag))
	out, err := rt.Run(context.Background(), Program{JS: js, Tools: []string{"a"}, Suspend: func(Quiescence) bool { return true }}, okTools)
	require.NoError(t, err)
	require.NotNil(t, out.Suspended, "not suspended: %s", out.Result)
	return out.Suspended
}

// The free list keeps up to snapshotBufferCount buffers: at the count the
// last is kept, past it refused; each charged to admission as the pool is.
func TestRuntime_keepSnapshotBuffer_count(t *testing.T) {
	rt := bufferRuntime(t, NewConfig().WithPool(0))
	before := rt.pooledBytes
	for i := range snapshotBufferCount {
		rt.keepSnapshotBuffer(make([]byte, 0, snapshot.BlockSize))
		require.Len(t, rt.snapBufs.free, i+1, "below and at the count: kept")
	}
	rt.keepSnapshotBuffer(make([]byte, 0, snapshot.BlockSize))
	require.Len(t, rt.snapBufs.free, snapshotBufferCount, "past the count: left to the collector")
	require.Equal(t, before+int64(snapshotBufferCount*snapshot.BlockSize), rt.pooledBytes, "charged to admission")
	for range snapshotBufferCount {
		require.True(t, rt.yieldSnapshotBuffer())
	}
	require.False(t, rt.yieldSnapshotBuffer())
	require.Equal(t, before, rt.pooledBytes, "yielded: uncharged")
}

// The free list keeps up to snapshotBufferBytes of capacity: a buffer that
// brings it to the bound is kept, one past it is not.
func TestRuntime_keepSnapshotBuffer_bytes(t *testing.T) {
	rt := bufferRuntime(t, NewConfig().WithPool(0))
	rt.keepSnapshotBuffer(make([]byte, 0, snapshotBufferBytes/2))
	rt.keepSnapshotBuffer(make([]byte, 0, snapshotBufferBytes/2-snapshot.BlockSize))
	require.Len(t, rt.snapBufs.free, 2, "below the bound")
	rt.keepSnapshotBuffer(make([]byte, 0, 2*snapshot.BlockSize))
	require.Len(t, rt.snapBufs.free, 2, "past the bound")
	rt.keepSnapshotBuffer(make([]byte, 0, snapshot.BlockSize))
	require.Len(t, rt.snapBufs.free, 3, "at the bound")
	require.Equal(t, int64(snapshotBufferBytes), rt.snapBufs.bytes)
	rt.keepSnapshotBuffer(make([]byte, 0, snapshot.BlockSize-1))
	require.Len(t, rt.snapBufs.free, 3, "a buffer under a block is not worth keeping")
}

// A buffer that does not fit under the committed memory cap is not kept,
// and one kept is given up to a run that does not fit beside it.
func TestRuntime_keepSnapshotBuffer_committedMemory(t *testing.T) {
	rt := bufferRuntime(t, NewConfig().WithPool(0).WithLimits(api.Limits{MemoryBytes: 64 << 20}).WithMaxCommittedMemory(64<<20))
	rt.keepSnapshotBuffer(make([]byte, 0, 65<<20))
	require.Empty(t, rt.snapBufs.free, "over the cap")
	rt.keepSnapshotBuffer(make([]byte, 0, 8<<20))
	require.Len(t, rt.snapBufs.free, 1)
	out, err := rt.Run(context.Background(), Program{JS: `return 1`, Limits: rt.Limits()}, okTools)
	require.NoError(t, err)
	require.JSONEq(t, `1`, string(out.Result))
	require.Empty(t, rt.snapBufs.free, "given up to the run, which needs the whole cap")
}

// A first suspension writes into a buffer given back, clipped to its
// length: what the buffer held past it is out of reach.
func TestRuntime_RecycleSnapshot_firstSuspensionTakesIt(t *testing.T) {
	rt := bufferRuntime(t, NewConfig().WithPool(0))
	big := suspendHeap(t, rt, "a", 1<<20)
	old := big.buf
	rt.RecycleSnapshot(big)
	require.Nil(t, big.Snapshot, "given back: not to be read again")
	rt.RecycleSnapshot(big) // a second time is a no-op
	require.Len(t, rt.snapBufs.free, 1)

	small := suspendHeap(t, rt, "b", 64<<10)
	require.True(t, sameBuffer(small.Snapshot, old), "written into the buffer given back")
	require.Equal(t, len(small.Snapshot), cap(small.Snapshot), "clipped")
	require.Empty(t, rt.snapBufs.free, "taken out of the free list")
	out, err := rt.Resume(context.Background(), small.Snapshot, okTools, Resumption{})
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`"b:%d"`, 64<<10), string(out.Result))

	// Too small for the next one: a new buffer, the small one stays.
	rt.keepSnapshotBuffer(make([]byte, 0, snapshot.BlockSize))
	again := suspendHeap(t, rt, "c", 1<<20)
	require.Len(t, rt.snapBufs.free, 1)
	require.Greater(t, cap(again.buf), len(again.Snapshot), "a new buffer has room for a slightly larger snapshot")
}

// Resumption.Recycle gives the snapshot to the Runtime once the run
// starts, and the resumed run's next suspension takes it back.
func TestRuntime_Resume_recycle(t *testing.T) {
	rt := bufferRuntime(t, NewConfig().WithPool(0))
	ctx := context.Background()
	js := `globalThis.big = "x".repeat(300000); const a = await tools.a({n: 1}); const b = await tools.a({n: 2});
		return [a.n, b.n, big.length];`
	out, err := rt.Run(ctx, Program{JS: js, Tools: []string{"a"}, Suspend: func(Quiescence) bool { return true }}, okTools)
	require.NoError(t, err)
	first := out.Suspended
	require.NotNil(t, first)
	buf := first.buf
	spares := 0
	if name, _ := defaultEngine(); name == EngineWazero {
		spares = 1 // its memory is a reservation of the host's
	}
	require.Equal(t, spares, rt.PoolStats().ResumeSpares, "the suspended run's memory is kept backed for its resume")
	out, err = rt.Resume(ctx, first.Snapshot, okTools, Resumption{Recycle: first, Suspend: func(Quiescence) bool { return true }})
	require.NoError(t, err)
	require.Nil(t, first.Snapshot, "the Runtime's once the run started")
	second := out.Suspended
	require.NotNil(t, second)
	require.True(t, sameBuffer(second.Snapshot, buf), "the next snapshot is written into the first's buffer")
	out, err = rt.Resume(ctx, second.Snapshot, okTools, Resumption{Recycle: second})
	require.NoError(t, err)
	require.JSONEq(t, `[1, 2, 300000]`, string(out.Result))
	require.Len(t, rt.snapBufs.free, 1, "the run ended: its snapshot's buffer is back")
	st := rt.PoolStats()
	require.Equal(t, 1, st.SnapshotBuffers)
	require.Equal(t, int64(cap(buf)), st.SnapshotBufferBytes)
	require.Equal(t, spares, st.ResumeSpares, "the resumed memory is kept backed")
	require.Equal(t, spares > 0, st.ResumeSpareBytes > 0)
}

// Resumption.Recycle must be the snapshot's Suspended; one given to a
// Resume that fails before its run starts is the caller's still.
func TestRuntime_Resume_recycle_refused(t *testing.T) {
	ctx := context.Background()
	rt := bufferRuntime(t, NewConfig().WithPool(0))
	a := suspendHeap(t, rt, "a", 64<<10)
	b := suspendHeap(t, rt, "b", 64<<10)
	_, err := rt.Resume(ctx, a.Snapshot, okTools, Resumption{Recycle: b})
	require.ErrorContains(t, err, "Resumption.Recycle is not the Suspended of the snapshot being resumed")
	require.NotNil(t, b.Snapshot)

	corrupt := append([]byte(nil), a.Snapshot...)
	corrupt[len(corrupt)-1] ^= 1
	s := &Suspended{Snapshot: corrupt}
	_, err = rt.Resume(ctx, corrupt, okTools, Resumption{Recycle: s})
	require.ErrorIs(t, err, ErrSnapshot)
	require.NotNil(t, s.Snapshot, "refused before the run started: not given")

	require.NoError(t, rt.Close(ctx))
	_, err = rt.Resume(ctx, a.Snapshot, okTools, Resumption{Recycle: a})
	require.ErrorIs(t, err, ErrClosed)
	require.NotNil(t, a.Snapshot)
}

// Runs suspend, resume with Recycle and suspend again, many at once: no
// buffer is ever two live snapshots', and each run resumes to its own
// result (a buffer shared or written under a live snapshot would give
// another run's, or fail its check).
func TestRuntime_RecycleSnapshot_hammer(t *testing.T) {
	rt := bufferRuntime(t, NewConfig())
	ctx := context.Background()
	var mu sync.Mutex
	live := map[*byte]string{}
	hold := func(s *Suspended, who string) {
		mu.Lock()
		defer mu.Unlock()
		p := &s.Snapshot[:1][0]
		require.Empty(t, live[p], "%s's snapshot is in a live snapshot's buffer", who)
		live[p] = who
	}
	drop := func(s *Suspended) {
		mu.Lock()
		delete(live, &s.Snapshot[:1][0])
		mu.Unlock()
	}
	const workers, rounds = 6, 12
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				tag := fmt.Sprintf("w%d-%d.", w, i)
				js := fmt.Sprintf(`globalThis.big = %q.repeat(%d); const a = await tools.a({n: 1}); const b = await tools.a({n: 2});
					return big.slice(0, %d) + (a.n + b.n) + ":" + big.length;`, tag, 20000+w*3000+i*100, len(tag))
				out, err := rt.Run(ctx, Program{JS: js, Tools: []string{"a"}, Suspend: func(Quiescence) bool { return true }}, okTools)
				require.NoError(t, err)
				s := out.Suspended
				require.NotNil(t, s)
				hold(s, tag)
				drop(s) // given to the Runtime by Recycle, once the run starts
				out, err = rt.Resume(ctx, s.Snapshot, okTools, Resumption{Recycle: s, Suspend: func(Quiescence) bool { return true }})
				require.NoError(t, err)
				again := out.Suspended
				require.NotNil(t, again)
				hold(again, tag+"again")
				if i%2 == 0 {
					drop(again)
					out, err = rt.Resume(ctx, again.Snapshot, okTools, Resumption{Recycle: again})
				} else {
					keep := append([]byte(nil), again.Snapshot...)
					out, err = rt.Resume(ctx, again.Snapshot, okTools, Resumption{})
					require.Equal(t, keep, again.Snapshot, "a snapshot not given back is never written")
					drop(again)
					rt.RecycleSnapshot(again)
				}
				require.NoError(t, err)
				require.JSONEq(t, fmt.Sprintf(`%q`, fmt.Sprintf("%s3:%d", tag, len(tag)*(20000+w*3000+i*100))), string(out.Result))
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, len(rt.snapBufs.free), snapshotBufferCount)
}
