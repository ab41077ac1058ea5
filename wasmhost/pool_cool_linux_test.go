//go:build linux

package wasmhost

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/admit"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
)

// coolImage is spareImage's image held in a sealed memfd, as a Runtime's
// is where it can be, and a pool for it that keeps hot recycled instances
// hot.
func coolImage(t *testing.T, hot int) (*image, *pool) {
	t.Helper()
	img, p := spareImage(t, 4, 0)
	img.fd = vmem.SealedFile(img.memory)
	require.GreaterOrEqual(t, img.fd, 0, "a memfd")
	t.Cleanup(img.close)
	p.hot, p.closed = hot, true // closed: no filler; recycle is tested through recycleInto
	return img, p
}

// cowInstance is an instance recycled from a run of tenant, whose memory
// maps img copy-on-write and whose run wrote three of its pages, with one
// export bound.
func cowInstance(t *testing.T, img *image, tenant string) *instance {
	t.Helper()
	mem, ok := vmem.Reserve(8*abi.PageSize, 0)
	require.True(t, ok)
	t.Cleanup(func() { vmem.Release(mem) })
	require.True(t, vmem.MapFile(mem, img.fd, len(img.memory)))
	for _, off := range []int{0, 5000, len(img.memory) - 1} {
		mem[off] ^= 0xff
	}
	inst := &instance{mod: &fakeMod{}, memory: &cappedMemory{buf: mem[:len(img.memory)], mapped: mem, image: img, cow: true},
		recycled: true, tenant: tenant}
	inst.lazy[1] = export{name: abi.ExportStart, field: &inst.start, f: nopFunc{}}
	inst.start = nopFunc{}
	return inst
}

// backedPages counts the pages of b that hold a private copy.
func backedPages(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	_, ok := vmem.PrivatePages(b, nil, func(int, int) { n++ })
	require.True(t, ok, "the page table is readable")
	return n
}

func TestInstance_cool_revertsToTheImage(t *testing.T) {
	img, _ := coolImage(t, 0)
	inst := cowInstance(t, img, "a")
	require.Equal(t, 3, backedPages(t, inst.memory.buf), "the run's writes are private copies")
	require.True(t, inst.cool())
	require.True(t, inst.cold)
	require.Equal(t, img.memory, inst.memory.buf, "the image's bytes again")
	require.Zero(t, backedPages(t, inst.memory.buf), "and none of its pages backed")
	require.Nil(t, inst.lazy[1].f, "its exports unbound")
	require.Same(t, &inst.lazy[1], inst.start, "bound again at their next call")

	copied := &instance{memory: &cappedMemory{buf: append([]byte(nil), img.memory...)}}
	copied.memory.buf[0] ^= 0xff
	require.False(t, copied.cool(), "a copy of the image cannot be reverted")
	require.False(t, copied.cold)
	require.NotEqual(t, img.memory, copied.memory.buf, "and is left as it was (reset resets it block by block)")
}

// The pool keeps at most hot recycled instances hot: below and at the
// bound an instance stays hot, past it it is cooled.
func TestPool_recycle_hotBound(t *testing.T) {
	img, p := coolImage(t, 2)
	p.closed = false
	defer func() { p.idle, p.closed = nil, true }() // not real instances: not closed
	var got []bool
	for range 3 {
		inst := cowInstance(t, img, "a")
		require.True(t, p.recycle(inst))
		got = append(got, inst.cold)
	}
	require.Equal(t, []bool{false, false, true}, got, "hot below and at 2, cooled past it")
	require.Equal(t, 2, p.hotIdle())
	require.Equal(t, int64(1), p.cooled.Load())
	require.Equal(t, img.memory, p.idle[2].memory.buf)
	require.Zero(t, backedPages(t, p.idle[2].memory.buf))
	require.Equal(t, 3, backedPages(t, p.idle[1].memory.buf), "a hot one keeps its pages (reset copies the image's bytes into them)")
}

// A run takes its tenant's hot instance first, then its cooled one, then a
// new one.
func TestPool_take_hotFirst(t *testing.T) {
	img := &image{memory: make([]byte, abi.PageSize)}
	rt := &Runtime{image: img, admission: admit.New(100, 0)}
	p := &pool{rt: rt, size: 4, charge: int64(len(img.memory)), stop: make(chan struct{}), closed: true} // closed: no filler
	fresh, cold, hot, other := &instance{}, &instance{recycled: true, tenant: "a", cold: true},
		&instance{recycled: true, tenant: "a"}, &instance{recycled: true, tenant: "b"}
	p.idle = []*instance{fresh, hot, cold, other}
	require.Same(t, hot, p.take("a"), "a's hot one, before its cooled one after it")
	require.Same(t, cold, p.take("a"), "then its cooled one")
	require.Same(t, fresh, p.take("a"), "then a new one")
	require.Nil(t, p.take("a"), "only b's is left")
}

// A spare kept past the pool's hot ones holds no page: its memory is the
// image's file again.
func TestPool_keep_coolsPastHot(t *testing.T) {
	img, p := coolImage(t, 1)
	p.closed = false
	defer p.close()
	var spares []spare
	for range 2 {
		inst := cowInstance(t, img, "")
		m := inst.memory
		s := spare{mem: m.mapped, used: len(m.buf), cow: true}
		require.True(t, p.keep(s))
		spares = append(spares, s)
	}
	require.Equal(t, 3, backedPages(t, spares[0].mem[:len(img.memory)]), "at the bound: backed")
	require.Zero(t, backedPages(t, spares[1].mem[:len(img.memory)]), "past it: reverted")
	require.Equal(t, img.memory, spares[1].mem[:len(img.memory)])
	s, ok := p.spare(8 * abi.PageSize)
	require.True(t, ok)
	require.Equal(t, img.memory, s.mem[:len(img.memory)], "taken, it is the image")
	p.mu.Lock()
	p.spares = nil // released by cowInstance's cleanup
	p.mu.Unlock()
}
