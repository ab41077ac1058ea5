package wasmhost

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The pool takes recycled instances up to twice its size, charged as its
// own; a pool that is closed takes none.
func TestPool_recycle_bounds(t *testing.T) {
	img := &image{memory: make([]byte, pageSize)}
	rt := &Runtime{image: img, admission: newGate(100, 0)}
	p := &pool{rt: rt, size: 2, charge: int64(len(img.memory)), stop: make(chan struct{})}
	for i := range recycleFactor * p.size {
		require.True(t, p.wants())
		require.True(t, p.recycle(&instance{}), "recycled instance %d, below or at twice the size", i+1)
	}
	require.False(t, p.wants())
	require.False(t, p.recycle(&instance{}), "past twice the size")
	require.Equal(t, int64(recycleFactor*p.size)*p.charge, rt.pooledBytes)
	require.Equal(t, int64(recycleFactor*p.size), p.recycled.Load())
	p.idle = nil // not real instances: not closed
	p.closed = true
	require.False(t, p.wants())
	require.False(t, p.recycle(&instance{}), "closed")
}

// A recycled instance is charged to the committed memory cap: it is not
// taken when the cap has no room for it.
func TestPool_recycle_chargedToTheCap(t *testing.T) {
	img := &image{memory: make([]byte, pageSize)}
	rt := &Runtime{image: img, admission: newGate(100, 2*pageSize)}
	p := &pool{rt: rt, size: 4, charge: int64(len(img.memory)), stop: make(chan struct{})}
	require.True(t, p.recycle(&instance{}))
	require.True(t, p.recycle(&instance{}), "at the cap")
	require.False(t, p.recycle(&instance{}), "past the cap")
	p.idle = nil
}

// A Runtime whose image cannot be reused (a guest that can write its
// tables) recycles nothing.
func TestRuntime_recycle_notReusable(t *testing.T) {
	ctx := t.Context()
	rt, err := New(ctx, NewConfig())
	require.NoError(t, err)
	defer rt.Close(ctx)
	require.True(t, rt.image.reusable, "the guest writes no table")
	rt.image.reusable = false
	for range 3 {
		_, err := rt.Run(ctx, Program{JS: `return 1`}, DispatcherFunc(nil))
		require.NoError(t, err)
	}
	require.Zero(t, rt.PoolStats().Recycled)
}

// A recycled instance serves only runs of the tenant whose run it served;
// a new one serves any.
func TestPool_take_byTenant(t *testing.T) {
	img := &image{memory: make([]byte, pageSize)}
	rt := &Runtime{image: img, admission: newGate(100, 0)}
	p := &pool{rt: rt, size: 4, charge: int64(len(img.memory)), stop: make(chan struct{}), closed: true} // closed: no filler
	fresh, ofA, ofNone := &instance{}, &instance{recycled: true, tenant: "a"}, &instance{recycled: true}
	p.idle = []*instance{fresh, ofA, ofNone}
	require.Same(t, ofNone, p.take(""), "the last idle, recycled from a run of no tenant")
	require.Same(t, fresh, p.take("b"), "not a's: the new one")
	require.Nil(t, p.take("b"), "only a's is left")
	require.Same(t, ofA, p.take("a"))
	require.Empty(t, p.idle)
}
