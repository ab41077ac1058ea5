package wasmhost

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

// noExports is an engine instance without exports.
type noExports struct{ engine.Instance }

func (noExports) Function(string) engine.Func { return nil }

// A restored instance binds each export at its first call: idle, it holds
// none (no call engine, no stack); a run binds those it calls.
func TestRestore_bindsExportsLazily(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	defer rt.Close(ctx)
	if rt.image == nil {
		t.Fatal("no image: the guest cannot be restored")
	}
	inst, err := rt.restore(ctx, uint64(abi.MemoryPages(rt.limits.MemoryBytes))*abi.PageSize)
	require.NoError(t, err)
	defer inst.close(ctx)
	for i := range inst.lazy {
		require.Nil(t, inst.lazy[i].f, "%s is not bound before its first call", boundExports[i])
	}
	require.NoError(t, inst.restored.CallWithStack(ctx, inst.stack[:]))
	require.Equal(t, int32(abi.StatusDone), int32(inst.stack[0]))
	for i := range inst.lazy {
		require.Equal(t, boundExports[i] == abi.ExportRestored, inst.lazy[i].f != nil, "only %s is bound", abi.ExportRestored)
	}
	require.NotSame(t, &inst.lazy[4], inst.restored, "bound, the field holds the engine's function")
	inst.unbind()
	require.Nil(t, inst.lazy[4].f, "unbound")
	require.Same(t, &inst.lazy[4], inst.restored, "unbound, the field holds the export again")
	require.NoError(t, inst.restored.CallWithStack(ctx, inst.stack[:]), "bound again at the next call")
}

func TestExport_CallWithStack_missing(t *testing.T) {
	e := export{mod: noExports{}, name: "ptcx_gone"}
	err := e.CallWithStack(context.Background(), nil)
	require.True(t, errors.Is(err, abi.ErrStaleGuest), "%v", err)
	require.ErrorContains(t, err, "ptcx_gone")
}

// nopFunc is a guest function that does nothing.
type nopFunc struct{}

func (nopFunc) CallWithStack(context.Context, []uint64) error { return nil }

// BenchmarkExport_CallWithStack is the cost of calling an export bound at
// its first call (export) through the instance's field, against calling
// a function bound at the start, in the same run: what binding lazily
// adds to every later export call, a nested call's ptcx_resume among
// them (nothing: bound, the field holds the function).
func BenchmarkExport_CallWithStack(b *testing.B) {
	var stack [4]uint64
	ctx := context.Background()
	b.Run("bound", func(b *testing.B) {
		field := engine.Func(nopFunc{})
		for b.Loop() {
			_ = field.CallWithStack(ctx, stack[:])
		}
	})
	b.Run("lazy", func(b *testing.B) {
		var field engine.Func
		e := &export{mod: oneExport{}, name: abi.ExportResume, field: &field}
		field = e
		for b.Loop() {
			_ = field.CallWithStack(ctx, stack[:])
		}
	})
}

// oneExport is an engine instance whose every export is nopFunc.
type oneExport struct{ engine.Instance }

func (oneExport) Function(string) engine.Func { return nopFunc{} }
