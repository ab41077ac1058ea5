package wasmhost

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/admit"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// fakeMod is an engine instance that only records its closing.
type fakeMod struct {
	engine.Instance
	closed bool
}

func (f *fakeMod) Close(context.Context) { f.closed = true }

func (f *fakeMod) EngineMemory() []byte { return nil } // the host's: cappedMemory.buf

// recycledInstance is an instance recycled from a run of tenant, whose
// closing is recorded.
func recycledInstance(tenant string) (*instance, *fakeMod) {
	m := &fakeMod{}
	return &instance{mod: m, memory: &cappedMemory{}, recycled: true, tenant: tenant}, m
}

// The pool holds recycled instances up to twice its size, charged as its
// own; past it, the oldest recycled one gives way; a closed pool takes
// none. The filler counts only the new ones.
func TestPool_recycle_bounds(t *testing.T) {
	img := &image{memory: make([]byte, abi.PageSize)}
	rt := &Runtime{image: img, admission: admit.New(100, 0)}
	p := &pool{rt: rt, size: 2, charge: int64(len(img.memory)), stop: make(chan struct{})}
	var mods []*fakeMod
	for i := range recycleFactor * p.size {
		inst, m := recycledInstance("a")
		mods = append(mods, m)
		require.True(t, p.wants())
		require.True(t, p.recycle(inst), "recycled instance %d, below or at twice the size", i+1)
	}
	require.Equal(t, int64(recycleFactor*p.size)*p.charge, rt.pooledBytes)
	require.Zero(t, p.restored(), "none is new: the filler would restore size of them")
	last, _ := recycledInstance("b")
	require.True(t, p.recycle(last), "past twice the size: the oldest gives way")
	require.True(t, mods[0].closed, "the oldest was closed")
	require.False(t, mods[1].closed)
	require.Len(t, p.idle, recycleFactor*p.size)
	require.Same(t, last, p.idle[len(p.idle)-1])
	require.Equal(t, int64(recycleFactor*p.size)*p.charge, rt.pooledBytes, "its charge went with it")
	require.Equal(t, int64(recycleFactor*p.size+1), p.recycled.Load())
	p.idle = nil // not real instances: not closed
	p.closed = true
	require.False(t, p.wants())
	inst, _ := recycledInstance("a")
	require.False(t, p.recycle(inst), "closed")
}

// A recycled instance is charged to the committed memory cap: it is not
// taken when the cap has no room for it.
func TestPool_recycle_chargedToTheCap(t *testing.T) {
	img := &image{memory: make([]byte, abi.PageSize)}
	rt := &Runtime{image: img, admission: admit.New(100, 2*abi.PageSize)}
	p := &pool{rt: rt, size: 4, charge: int64(len(img.memory)), stop: make(chan struct{})}
	for _, ok := range []bool{true, true, false} { // below, at, past the cap
		inst, _ := recycledInstance("a")
		require.Equal(t, ok, p.recycle(inst))
	}
	p.idle = nil
}

// A Runtime whose image cannot be reused (a guest that can write its
// tables) recycles nothing.
func TestRuntime_recycle_notReusable(t *testing.T) {
	ctx := t.Context()
	rt, err := New(ctx, NewConfig())
	require.NoError(t, err)
	defer rt.Close(ctx)
	require.True(t, rt.image.reusable, "the guest writes no table: reusable on every engine")
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
	img := &image{memory: make([]byte, abi.PageSize)}
	rt := &Runtime{image: img, admission: admit.New(100, 0)}
	p := &pool{rt: rt, size: 4, charge: int64(len(img.memory)), stop: make(chan struct{}), closed: true} // closed: no filler
	fresh, ofA, ofNone, fresh2 := &instance{}, &instance{recycled: true, tenant: "a"}, &instance{recycled: true}, &instance{}
	p.idle = []*instance{fresh, ofA, ofNone, fresh2}
	require.Same(t, ofNone, p.take(""), "recycled from a run of no tenant, before a later new one")
	require.Same(t, fresh2, p.take("b"), "none of b's: the last new one")
	require.Same(t, fresh, p.take("b"))
	require.Nil(t, p.take("b"), "only a's is left")
	require.Same(t, ofA, p.take("a"))
	require.Empty(t, p.idle)
}
