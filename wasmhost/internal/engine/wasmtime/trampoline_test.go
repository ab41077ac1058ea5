package wasmtime

import (
	"context"
	"encoding/binary"
	"testing"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// importTestModule imports WASI's clock_time_get(i32, i64, i32) -> i32
// and exports it as now, with a memory of one page exported when
// withMemory.
func importTestModule(withMemory bool) []byte {
	const i32, i64 = 0x7f, 0x7e
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = append(m, sec(1, 1, 0x60, 3, i32, i64, i32, 1, i32)...)
	imp := append([]byte{1}, str(wasiModule)...)
	imp = append(append(imp, str("clock_time_get")...), 0x00, 0)
	m = append(m, sec(2, imp...)...)
	m = append(m, sec(3, 1, 0)...)
	exports := append(append([]byte{1}, str("now")...), 0x00, 1)
	if withMemory {
		m = append(m, sec(5, 1, 0x00, 1)...)
		exports = append(append([]byte{2}, str("now")...), 0x00, 1)
		exports = append(append(exports, str("memory")...), 0x02, 0)
	}
	m = append(m, sec(7, exports...)...)
	body := []byte{0x00, 0x20, 0, 0x20, 1, 0x20, 2, 0x10, 0, 0x0b} // local.get 0..2, call 0
	return append(m, sec(10, append([]byte{1, byte(len(body))}, body...)...)...)
}

func newImportTestInstance(t *testing.T, withMemory bool) *wasmtimeInstance {
	return newWasmtimeTestInstance(t, importTestModule(withMemory), world.New(world.Spec{Deterministic: true, Epoch: 5e9}))
}

// The imports' trampoline (ptcxWasmtimeImport) reads each raw value at its
// own slot: the pointer after the i64 is where the clock is written.
func TestWasmtimeImport_rawArguments(t *testing.T) {
	i := newImportTestInstance(t, true)
	ctx := context.Background()
	now := i.Function("now")
	require.NotNil(t, now)
	for _, tt := range []struct {
		name      string
		id, at    uint64
		wantErrno uint64
		atLeast   uint64 // at at (the deterministic clocks move on at every read)
	}{
		{"realtime", 0, 64, wasiSuccess, 5e9},
		{"monotonic", 1, 128, wasiSuccess, 0},
		{"an unknown clock", 7, 192, wasiInval, 0},
		{"a pointer past the memory's end", 0, abi.PageSize - 4, wasiFault, 0},
		{"an i32's high bits are not the guest's", 0xffff_ffff_0000_0000, 256, wasiSuccess, 5e9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stack := []uint64{tt.id, 1 << 40, tt.at}
			require.NoError(t, now.CallWithStack(ctx, stack))
			require.Equal(t, tt.wantErrno, stack[0])
			if tt.at+8 <= abi.PageSize {
				b, ok := i.Memory().Read(uint32(tt.at), 8)
				require.True(t, ok)
				got := binary.LittleEndian.Uint64(b)
				require.GreaterOrEqual(t, got, tt.atLeast)
				if tt.wantErrno != wasiSuccess {
					require.Zero(t, got, "nothing written")
				}
			}
		})
	}
}

// Without an exported memory, an import sees none: every pointer faults.
func TestWasmtimeImport_noMemory(t *testing.T) {
	i := newImportTestInstance(t, false)
	stack := []uint64{0, 1, 0}
	require.NoError(t, i.Function("now").CallWithStack(context.Background(), stack))
	require.Equal(t, uint64(wasiFault), stack[0])
}

// A store is mapped while its instance lives, and forgotten when it is
// closed, so that no closed store's context can name a live state.
func TestWasmtimeStores_mappedWhileLive(t *testing.T) {
	count := func() (n int) {
		wasmtimeStores.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	a := newImportTestInstance(t, true)
	b := newImportTestInstance(t, true)
	require.Equal(t, before+2, count())
	a.Close(context.Background())
	require.Equal(t, before+1, count())
	b.Close(context.Background())
	b.Close(context.Background()) // twice is once
	require.Equal(t, before, count())
}

func TestLinkerOf_refusesWhatIsNotALinker(t *testing.T) {
	core, err := wasmtimeShared()
	require.NoError(t, err)
	_, err = linkerOf(&wasmtime.Linker{Engine: core.engine}, core.engine)
	require.ErrorIs(t, err, errWasmtimeLayout, "a linker without its C pointer")
	_, err = linkerOf(core.linker, wasmtime.NewEngine())
	require.ErrorIs(t, err, errWasmtimeLayout, "a linker of another engine")
	_, err = linkerOf(core.linker, nil)
	require.ErrorIs(t, err, errWasmtimeLayout, "no engine")
	ptr, err := linkerOf(core.linker, core.engine)
	require.NoError(t, err)
	require.NotNil(t, ptr)
}

func TestDefineRaw_refusesOtherKinds(t *testing.T) {
	core, err := wasmtimeShared()
	require.NoError(t, err)
	err = defineRaw(core.linker, core.engine, "test", "f", []wasmtime.ValKind{wasmtime.KindF64}, nil, 0)
	require.ErrorContains(t, err, "a value other than i32 and i64")
	err = defineRaw(core.linker, core.engine, "test", "f", make([]wasmtime.ValKind, maxImportValues+1), nil, 0)
	require.ErrorContains(t, err, "an import of 10 parameters")
	// wasmtime's own refusal comes back as an error: a linker does not
	// allow a name to be defined twice. (A linker of its own: the shared
	// one serves every other test.)
	l := wasmtime.NewLinker(core.engine)
	i32 := []wasmtime.ValKind{wasmtime.KindI32}
	require.NoError(t, defineRaw(l, core.engine, "test", "f", i32, i32, 0))
	err = defineRaw(l, core.engine, "test", "f", i32, i32, 0)
	require.ErrorContains(t, err, "define test.f")
}

// growTestModule exports a memory of one page (at most four) and
// grow(pages) -> the pages it had, or -1.
func growTestModule() []byte {
	const i32 = 0x7f
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = append(m, sec(1, 1, 0x60, 1, i32, 1, i32)...)
	m = append(m, sec(3, 1, 0)...)
	m = append(m, sec(5, 1, 0x01, 1, 4)...)
	exports := append(append([]byte{2}, str("grow")...), 0x00, 0)
	exports = append(append(exports, str("memory")...), 0x02, 0)
	m = append(m, sec(7, exports...)...)
	body := []byte{0x00, 0x20, 0, 0x40, 0, 0x0b} // local.get 0, memory.grow 0
	return append(m, sec(10, append([]byte{1, byte(len(body))}, body...)...)...)
}

// The host's view of the memory is kept between calls into the guest, and
// dropped at each: after the guest grows the memory, the host sees the
// new size, and after the host grows it, too.
func TestWasmtimeMemory_keptBetweenCalls(t *testing.T) {
	ctx := context.Background()
	i := newWasmtimeTestInstance(t, growTestModule(), world.New(world.Spec{Deterministic: true}))
	mem := i.Memory()
	require.Equal(t, uint32(abi.PageSize), mem.Size())
	require.False(t, mem.Write(abi.PageSize+8, []byte{1}), "past the end")

	stack := []uint64{1}
	require.NoError(t, i.Function("grow").CallWithStack(ctx, stack))
	require.Equal(t, uint64(1), stack[0], "the pages it had")
	require.Equal(t, uint32(2*abi.PageSize), mem.Size(), "the guest's growth seen")
	require.True(t, mem.Write(abi.PageSize+8, []byte{7}))
	b, ok := mem.Read(abi.PageSize+8, 1)
	require.True(t, ok)
	require.Equal(t, byte(7), b[0])

	prev, ok := mem.Grow(1)
	require.True(t, ok)
	require.Equal(t, uint32(2), prev)
	require.Equal(t, uint32(3*abi.PageSize), mem.Size(), "the host's growth seen")
	require.True(t, mem.Write(2*abi.PageSize+8, []byte{9}))

	stack = []uint64{5}
	require.NoError(t, i.Function("grow").CallWithStack(ctx, stack))
	require.Equal(t, uint64(0xffff_ffff), stack[0], "past the maximum: -1")
	require.Equal(t, uint32(3*abi.PageSize), mem.Size())
}

// wideImportModule imports test.wide, of path_open's signature (five i32,
// two i64, two i32) -> i32, and exports it as wide.
func wideImportModule() []byte {
	const i32, i64 = 0x7f, 0x7e
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = append(m, sec(1, 1, 0x60, 9, i32, i32, i32, i32, i32, i64, i64, i32, i32, 1, i32)...)
	imp := append(append([]byte{1}, str("test")...), str("wide")...)
	m = append(m, sec(2, append(imp, 0x00, 0)...)...)
	m = append(m, sec(3, 1, 0)...)
	m = append(m, sec(7, append(append([]byte{1}, str("wide")...), 0x00, 1)...)...)
	body := []byte{0x00}
	for i := range byte(9) {
		body = append(body, 0x20, i) // local.get i
	}
	body = append(body, 0x10, 0, 0x0b) // call 0
	return append(m, sec(10, append([]byte{1, byte(len(body))}, body...)...)...)
}

// The trampoline takes WASI's widest imports: nine parameters, i64 among
// them, each read at its own slot, an i32's high bits dropped.
func TestWasmtimeImport_nineParameters(t *testing.T) {
	core, err := wasmtimeShared()
	require.NoError(t, err)
	i32, i64 := wasmtime.KindI32, wasmtime.KindI64
	c := &wasmtimeCore{engine: core.engine, linker: wasmtime.NewLinker(core.engine)}
	var got []uint64
	err = c.define("test", "wide", []wasmtime.ValKind{i32, i32, i32, i32, i32, i64, i64, i32, i32}, []wasmtime.ValKind{i32},
		func(_ *wasmtimeState, _ engine.Memory, stack []uint64) {
			got = append([]uint64(nil), stack...)
			stack[0] = 0xffff_fffe
		})
	require.NoError(t, err)
	m, err := wasmtime.NewModule(core.engine, wideImportModule())
	require.NoError(t, err)
	store := wasmtime.NewStore(core.engine)
	defer store.Close()
	require.NoError(t, register(store, &wasmtimeState{}))
	defer unregister(store)
	inst, err := c.linker.Instantiate(store, m)
	require.NoError(t, err)
	res, err := inst.GetFunc(store, "wide").Call(store, int32(1), int32(2), int32(3), int32(-1), int32(5),
		int64(1<<40+6), int64(-7), int32(8), int32(9))
	require.NoError(t, err)
	require.Equal(t, int32(-2), res)
	require.Equal(t, []uint64{1, 2, 3, 0xffff_ffff, 5, 1<<40 + 6, 0xffff_ffff_ffff_fff9, 8, 9}, got)
}
