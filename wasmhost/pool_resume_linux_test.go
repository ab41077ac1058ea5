//go:build linux

package wasmhost

import (
	"context"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// mapped reports whether the page at the start of b is mapped (mincore
// fails with ENOMEM on an address that is not).
func mapped(b []byte) bool {
	var vec [1]byte
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(abi.PageSize), uintptr(unsafe.Pointer(&vec[0])))
	return errno != syscall.ENOMEM
}

// The spare a new one evicts is unmapped, off the caller's path, within
// moments; those kept stay mapped.
func TestRuntime_keepResumeSpare_evictedIsReleased(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	used := len(rt.image.memory) + abi.PageSize
	var kept [][]byte
	for range rt.resumeSpareCount() + 1 {
		b, ok := vmem.Reserve(uint64(used), 0)
		require.True(t, ok)
		require.True(t, rt.keepResumeSpare(resumeSpare{mem: b, used: used}))
		kept = append(kept, b)
	}
	require.Eventually(t, func() bool { return !mapped(kept[0]) }, 10*time.Second, time.Millisecond, "the oldest, evicted, is unmapped")
	for _, b := range kept[1:] {
		require.True(t, mapped(b), "the spares kept stay mapped")
	}
}

// A readied resume spare (its instance restored into it) that is evicted,
// yielded or closed is released: its instance closed and its memory
// unmapped, never kept as the pool's spare. On wazero whatever engine the
// suite runs on: only its memories are the host's reservations.
func TestRuntime_readiedResumeSpare_isReleased(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithEngine(EngineWazero).WithPool(2)) // the engine whose memory is the host's reservation
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	used := len(rt.image.memory) + abi.PageSize
	var kept [][]byte
	keep := func() {
		b, ok := vmem.Reserve(uint64(used), 0)
		require.True(t, ok)
		require.True(t, rt.keepResumeSpare(resumeSpare{mem: b, used: used}))
		kept = append(kept, b)
	}
	for range rt.resumeSpareCount() {
		keep()
	}
	waitResumeSparesReady(t, rt)
	require.GreaterOrEqual(t, rt.resumeSpares.readied.Load(), int64(rt.resumeSpareCount()))
	poolSpares := rt.PoolStats().Spares

	keep() // evicts the oldest, readied
	require.Eventually(t, func() bool { return !mapped(kept[0]) }, 10*time.Second, time.Millisecond, "the evicted readied spare is unmapped")
	waitResumeSparesReady(t, rt)
	require.True(t, rt.yieldResumeSpare())
	require.False(t, mapped(kept[1]), "the yielded readied spare is unmapped at once")
	rt.closeResumeSpares()
	for i, b := range kept {
		require.False(t, mapped(b), "spare %d: unmapped once closed", i)
	}
	require.Equal(t, poolSpares, rt.PoolStats().Spares, "none became the pool's spare")
}

// A spare the readier is restoring an instance into is its own: a take
// that only it covers waits for the readying to end, and yielding,
// evicting or closing the list leaves its memory mapped, for the readier
// to release once its instance is made. A take waiting when the list
// closes finds none.
func TestRuntime_readyingResumeSpare_isTheReadiers(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	rt.resumeSpares.bare = true // no readier: the test plays it
	used := len(rt.image.memory) + abi.PageSize
	readying := func(used int) []byte {
		b, ok := vmem.Reserve(uint64(used), 0)
		require.True(t, ok)
		require.True(t, rt.keepResumeSpare(resumeSpare{mem: b, used: used}))
		sp := &rt.resumeSpares
		sp.mu.Lock()
		sp.list[len(sp.list)-1].readying = true
		sp.mu.Unlock()
		return b
	}
	before := rt.pooledBytes

	w := readying(used)
	took := make(chan resumeSpare, 1)
	go func() {
		s, ok := rt.takeResumeSpare(used, 0)
		require.True(t, ok)
		took <- s
	}()
	select {
	case <-took:
		t.Fatal("a spare being readied was taken")
	case <-time.After(50 * time.Millisecond):
	}
	sp := &rt.resumeSpares
	sp.mu.Lock()
	sp.list[0].readying = false // as the readier does when it ends
	sp.cond().Broadcast()
	sp.mu.Unlock()
	select {
	case s := <-took:
		require.Equal(t, &w[0], &s.mem[0], "the take waited for the readying to end, and took it")
	case <-time.After(10 * time.Second):
		t.Fatal("the take did not end with the readying")
	}
	vmem.Release(w)

	a := readying(used)
	_, ok := rt.takeResumeSpare(used+abi.PageSize, 0)
	require.False(t, ok, "none covers it: no wait")
	require.True(t, rt.yieldResumeSpare())
	require.True(t, mapped(a), "yielded while readied: left to the readier")
	require.Equal(t, before, rt.pooledBytes, "yielded: uncharged")
	vmem.Release(a)

	b := readying(used)
	var bare [][]byte
	for range rt.resumeSpareCount() { // evicts b
		m, ok := vmem.Reserve(uint64(used), 0)
		require.True(t, ok)
		require.True(t, rt.keepResumeSpare(resumeSpare{mem: m, used: used}))
		bare = append(bare, m)
	}
	time.Sleep(50 * time.Millisecond) // the eviction's goroutine, had it released b
	require.True(t, mapped(b), "evicted while readied: left to the readier")
	vmem.Release(b)

	c := readying(used + abi.PageSize) // the one spare a take of its size fits
	none := make(chan bool, 1)
	go func() {
		_, ok := rt.takeResumeSpare(used+abi.PageSize, 0)
		none <- ok
	}()
	time.Sleep(20 * time.Millisecond) // the take waits on c
	rt.closeResumeSpares()
	select {
	case ok := <-none:
		require.False(t, ok, "closed: no spare")
	case <-time.After(10 * time.Second):
		t.Fatal("a take waiting on a readied spare did not end when the list closed")
	}
	require.True(t, mapped(c), "closed while readied: left to the readier")
	vmem.Release(c)
	for _, m := range bare[1:] { // bare[0] was evicted by c, released on a goroutine
		require.False(t, mapped(m), "the bare spares are released on close")
	}
}
