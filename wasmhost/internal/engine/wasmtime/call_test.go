package wasmtime

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// callTestModule is a module of five exported functions, for rawFunc:
//
//	add(i32, i32) -> i32       the sum
//	neg() -> i32               -1
//	wide(i64) -> i64           its parameter
//	four(i32, i32, i32, i32) -> i32  its last parameter
//	five(i32, i32, i32, i32, i32)    nothing
//	trap()                     unreachable
func callTestModule() []byte {
	const i32, i64 = 0x7f, 0x7e
	sec := func(id byte, items ...[]byte) []byte {
		body := []byte{byte(len(items))}
		for _, it := range items {
			body = append(body, it...)
		}
		return append([]byte{id, byte(len(body))}, body...)
	}
	fn := func(params []byte, results ...byte) []byte {
		t := append([]byte{0x60, byte(len(params))}, params...)
		return append(append(t, byte(len(results))), results...)
	}
	export := func(name string, index byte) []byte {
		return append(append([]byte{byte(len(name))}, name...), 0x00, index)
	}
	body := func(code ...byte) []byte { return append([]byte{byte(len(code) + 1), 0x00}, code...) }
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = append(m, sec(1,
		fn([]byte{i32, i32}, i32), fn(nil, i32), fn([]byte{i64}, i64),
		fn([]byte{i32, i32, i32, i32}, i32), fn([]byte{i32, i32, i32, i32, i32}), fn(nil))...)
	m = append(m, sec(3, []byte{0}, []byte{1}, []byte{2}, []byte{3}, []byte{4}, []byte{5})...)
	m = append(m, sec(7, export("add", 0), export("neg", 1), export("wide", 2),
		export("four", 3), export("five", 4), export("trap", 5))...)
	m = append(m, sec(10,
		body(0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b), // local.get 0, local.get 1, i32.add
		body(0x41, 0x7f, 0x0b),                   // i32.const -1
		body(0x20, 0x00, 0x0b),                   // local.get 0
		body(0x20, 0x03, 0x0b),                   // local.get 3
		body(0x0b),
		body(0x00, 0x0b), // unreachable
	)...)
	return m
}

func newCallTestInstance(t *testing.T) *wasmtimeInstance {
	return newWasmtimeTestInstance(t, callTestModule(), world.New(world.Spec{Deterministic: true}))
}

// newWasmtimeTestInstance instantiates the module bin on wasmtime, closed
// at the test's end.
func newWasmtimeTestInstance(t *testing.T, bin []byte, w *world.World) *wasmtimeInstance {
	t.Helper()
	ctx := context.Background()
	e, err := New(ctx, 1<<20, "", nil)
	require.NoError(t, err)
	m, err := e.Compile(ctx, bin)
	require.NoError(t, err)
	inst, err := e.Instantiate(ctx, m, nil, w, false)
	require.NoError(t, err)
	i := inst.(*wasmtimeInstance)
	t.Cleanup(func() { i.Close(ctx) })
	return i
}

func TestWasmtimeFunc_CallWithStack_results(t *testing.T) {
	i := newCallTestInstance(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		fn    string
		stack []uint64
		want  uint64
	}{
		{"i32 parameters and result", "add", []uint64{2, 40}, 42},
		{"an i32 result is its 32 bits, not sign-extended", "neg", []uint64{0xdead_beef_0000_0000}, 0xffff_ffff},
		{"an i64 parameter and result", "wide", []uint64{1<<40 + 5}, 1<<40 + 5},
		{"four parameters, as many as a call takes", "four", []uint64{1, 2, 3, 4}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := i.Function(tt.fn)
			require.NotNil(t, f)
			require.NoError(t, f.CallWithStack(ctx, tt.stack))
			require.Equal(t, tt.want, tt.stack[0])
		})
	}
}

func TestWasmtimeFunc_CallWithStack_fiveParameters(t *testing.T) {
	i := newCallTestInstance(t)
	err := i.Function("five").CallWithStack(context.Background(), make([]uint64, 5))
	require.ErrorContains(t, err, "an export of 5 parameters and 0 results, past the 4 this host calls")
}

func TestWasmtimeFunc_CallWithStack_trap(t *testing.T) {
	i := newCallTestInstance(t)
	err := i.Function("trap").CallWithStack(context.Background(), make([]uint64, 1))
	var trap *wasmtimeTrap
	require.True(t, errors.As(err, &trap), "got %v", err)
	require.EqualError(t, err, "wasm error: unreachable")
	stack := []uint64{1, 2}
	require.NoError(t, i.Function("add").CallWithStack(context.Background(), stack), "the instance is usable after a trap")
	require.Equal(t, uint64(3), stack[0])
}

func TestWasmtimeFunc_CallWithStack_closed(t *testing.T) {
	i := newCallTestInstance(t)
	f := i.Function("add")
	i.Close(context.Background())
	require.ErrorIs(t, f.CallWithStack(context.Background(), make([]uint64, 2)), errWasmtimeClosed)
}
