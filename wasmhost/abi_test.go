package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	wapi "github.com/tetratelabs/wazero/api"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
)

func FuzzGuestRange(f *testing.F) {
	f.Add(uint32(65536), uint64(0), uint64(10), uint32(100))
	f.Add(uint32(65536), uint64(65530), uint64(10), uint32(100))
	f.Add(uint32(0), uint64(1)<<40, uint64(1)<<33, uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, size uint32, ptr, length uint64, limit uint32) {
		p, n, err := abi.GuestRange(size, ptr, length, limit)
		if err != nil {
			return
		}
		require.Equal(t, uint32(ptr), p)
		require.Equal(t, uint32(length), n)
		require.LessOrEqual(t, n, limit)
		require.LessOrEqual(t, uint64(p)+uint64(n), uint64(size))
	})
}

func FuzzDecodeGuestError(f *testing.F) {
	f.Add([]byte(`{"kind":"exception","message":"Error: boom","stack":"    at <anonymous> (<program>:1:7)"}`))
	f.Add([]byte(`{"kind":"syntax","message":"x","line":2,"column":3}`))
	f.Add([]byte(`{"kind":"trap","message":"x"}`))
	f.Add([]byte(`{"kind":"memory","message":""}`))
	f.Add([]byte(`{"kind":"exception","message":"x","line":-1}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeGuestError(b)
		if err != nil {
			require.Nil(t, e)
			return
		}
		require.Contains(t, []api.Kind{api.KindException, api.KindSyntax, api.KindMemory, api.KindInvalidOutput}, e.Kind)
		require.NotEmpty(t, e.Message)
		require.GreaterOrEqual(t, e.Line, 0)
		require.GreaterOrEqual(t, e.Column, 0)
	})
}

// memoryModule is a wasm module that only exports one page of memory: the
// host functions are called directly with it, as the guest would.
var memoryModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1 page
	0x07, 0x0a, 0x01, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, // export it
}

// FuzzHostFunctions calls every host function with arbitrary pointers,
// lengths and memory contents. Each call must either work or stop the run
// with a RunError (the errStop panic that wazero turns into the export's
// error); any other panic is a bug in the decoding of guest input.
func FuzzHostFunctions(f *testing.F) {
	ctx := context.Background()
	wr := wazero.NewRuntime(ctx)
	defer wr.Close(ctx)
	mod, err := wr.Instantiate(ctx, memoryModule)
	require.NoError(f, err)
	mem := mod.Memory()
	funcs := []func(context.Context, engine.Memory, []uint64){hostCall, hostLog, hostTimerSet, hostTimerClear, hostResult, hostError, hostPoll}

	f.Add(uint8(0), uint32(0), uint32(4), uint32(8), uint32(2), []byte("echo\x00\x00\x00\x00{}"))
	f.Add(uint8(1), uint32(3), uint32(0), uint32(5), uint32(0), []byte("hello"))
	f.Add(uint8(1), uint32(9), uint32(0), uint32(5), uint32(0), []byte("hello"))
	f.Add(uint8(2), uint32(0xffffffff), uint32(0), uint32(0), uint32(0), []byte{})
	f.Add(uint8(4), uint32(0), uint32(7), uint32(0), uint32(0), []byte(`{"a":1}`))
	f.Add(uint8(4), uint32(65530), uint32(70000), uint32(0), uint32(0), []byte(`{`))
	f.Add(uint8(5), uint32(0), uint32(33), uint32(0), uint32(0), []byte(`{"kind":"exception","message":"x"}`))
	f.Fuzz(func(t *testing.T, which uint8, a, b, c, d uint32, memory []byte) {
		mem.Write(0, make([]byte, mem.Size()))
		mem.Write(0, memory[:min(len(memory), int(mem.Size()))])
		r := &run{
			disp: DispatcherFunc(func(_ string, _ json.RawMessage, done func(CallResult)) {
				done(CallResult{OK: true})
			}),
			limits: api.DefaultLimits(),
			tools:  map[string]string{"echo": "echo"},
			inbox:  newInbox(),
			output: output{limit: 100},
		}
		rctx := context.WithValue(ctx, runKey{}, r)
		r.ctx = rctx
		stack := []uint64{uint64(a), uint64(b), uint64(c), uint64(d)}
		func() {
			defer func() {
				if p := recover(); p != nil {
					require.Equal(t, errStop, p, "a panic other than errStop")
					require.NotNil(t, r.stopped, "stopped without a reason")
				}
			}()
			funcs[int(which)%len(funcs)](rctx, mem, stack)
		}()
		require.LessOrEqual(t, r.output.used, r.output.limit)
	})
}

func TestHostCall_limits(t *testing.T) {
	ctx := context.Background()
	wr := wazero.NewRuntime(ctx)
	defer wr.Close(ctx)
	mod, err := wr.Instantiate(ctx, memoryModule)
	require.NoError(t, err)
	mod.Memory().Write(0, []byte("echo{}"))
	var dispatched int
	r := &run{
		disp:   DispatcherFunc(func(_ string, _ json.RawMessage, _ func(CallResult)) { dispatched++ }),
		limits: api.Limits{MaxPendingCalls: 2, MaxCalls: 3, MaxCallArgBytes: 100, MaxInFlightArgBytes: 100},
		tools:  map[string]string{"echo": "echo"},
		inbox:  newInbox(),
	}
	rctx := context.WithValue(ctx, runKey{}, r)
	call := func() int32 {
		stack := []uint64{0, 4, 4, 2}
		hostCall(rctx, mod.Memory(), stack)
		return wapi.DecodeI32(stack[0])
	}
	require.Equal(t, int32(1), call())
	require.Equal(t, int32(2), call())
	require.Equal(t, int32(abi.RefusedPending), call())
	r.pending = 0
	require.Equal(t, int32(3), call())
	r.pending = 0
	require.Equal(t, int32(abi.RefusedTotal), call())
	require.Equal(t, 3, dispatched)
}

func TestOutput_log(t *testing.T) {
	o := output{limit: 20}
	require.True(t, o.log("", []byte("hello")))    // 5 bytes
	require.True(t, o.log("[warn] ", []byte("x"))) // a newline and 8 bytes
	require.False(t, o.log("", []byte("héllo")))   // 6 bytes left: the newline and "héll"
	require.Equal(t, []string{"hello", "[warn] x", "héll"}, o.lines)
	require.Equal(t, 20, o.used)
	require.False(t, o.log("", []byte("x")))
	require.Len(t, o.lines, 3)
	require.False(t, o.fitsResult(0), "a result needs its newline")

	o = output{limit: 10}
	require.True(t, o.log("", []byte("aaaaaaaaé")), "exactly at the limit") // 10 bytes
	o = output{limit: 10}
	require.False(t, o.log("", []byte("aaaaaaaaaé"))) // the é would be cut
	require.Equal(t, []string{"aaaaaaaaa"}, o.lines)

	o = output{limit: 10}
	require.True(t, o.log("", []byte("abc")))
	require.True(t, o.fitsResult(6), "3 + newline + 6 is exactly 10")
	require.False(t, o.fitsResult(7))
	require.True(t, (&output{limit: 5}).fitsResult(5), "no logs: no newline")
}

func TestShownSize(t *testing.T) {
	require.Equal(t, 3, shownSize([]byte(`"abc"`)))
	require.Equal(t, 1, shownSize([]byte(`"\n"`)), "an escape counts as what it shows")
	require.Equal(t, 7, shownSize([]byte(`{"a":1}`)))
}

func TestInbox(t *testing.T) {
	b := newInbox()
	done := b.doneFunc(1, 10)
	done(CallResult{OK: true, Value: json.RawMessage(`1`)})
	done(CallResult{Message: "second call ignored"})
	b.doneFunc(2, 0)(CallResult{Message: "two"})
	<-b.wake
	got := b.take(nil)
	require.Equal(t, []completion{{id: 1, args: 10, res: CallResult{OK: true, Value: json.RawMessage(`1`)}}, {id: 2, res: CallResult{Message: "two"}}}, got)
	b.close()
	b.doneFunc(3, 0)(CallResult{OK: true})
	require.Empty(t, b.take(nil), "outcomes after close are dropped")
}

// Callbacks come from slabs (fromSlab): across several slabs each
// keeps its own call's id and size, a callback called again (late, after
// later calls' callbacks were made and called) is still ignored, and
// callbacks called at once from many goroutines each queue one outcome.
func TestInbox_reportersAcrossSlabs(t *testing.T) {
	b := newInbox()
	const n = 3*slabSize + 5
	dones := make([]func(CallResult), n)
	for i := range dones {
		dones[i] = b.doneFunc(int32(i+1), i*10)
	}
	var wg sync.WaitGroup
	for i, done := range dones {
		wg.Go(func() { done(CallResult{OK: true, Value: json.RawMessage(strconv.Itoa(i))}) })
	}
	wg.Wait()
	for _, done := range dones {
		done(CallResult{Message: "late"})
	}
	got := b.take(nil)
	require.Len(t, got, n)
	slices.SortFunc(got, func(a, b completion) int { return int(a.id - b.id) })
	for i, c := range got {
		require.Equal(t, completion{id: int32(i + 1), args: i * 10, res: CallResult{OK: true, Value: json.RawMessage(strconv.Itoa(i))}}, c)
	}
}

func TestCappedMemory(t *testing.T) {
	m := &cappedMemory{limit: 10 * abi.PageSize}
	lm := m.Allocator().Allocate(abi.PageSize, 100*abi.PageSize)
	buf := lm.Reallocate(abi.PageSize)
	require.Len(t, buf, abi.PageSize)
	buf[0] = 7
	grown := lm.Reallocate(4 * abi.PageSize)
	require.Len(t, grown, 4*abi.PageSize)
	require.Equal(t, byte(7), grown[0], "growing keeps the contents")
	require.False(t, m.refused)
	require.Nil(t, lm.Reallocate(11*abi.PageSize))
	require.True(t, m.refused)
	lm.Free()
}

func TestEngineMemoryLimit(t *testing.T) {
	for _, n := range []int64{api.MinMemoryBytes, 16 << 20, api.DefaultMemoryBytes, 4 << 30} {
		l := abi.EngineMemoryLimit(n)
		require.Positive(t, l)
		require.Less(t, l, n-1<<20, "no headroom under %d", n)
	}
}

func TestDecodeGuestError(t *testing.T) {
	e, err := decodeGuestError([]byte(`{"kind":"syntax","message":"SyntaxError: x","line":3,"column":4}`))
	require.NoError(t, err)
	require.Equal(t, &RunError{Kind: api.KindSyntax, Message: "SyntaxError: x", Line: 3, Column: 4}, e)
	_, err = decodeGuestError([]byte(`{"kind":"abort","message":"x"}`))
	require.ErrorContains(t, err, `unknown kind "abort"`)
}

func TestRunError(t *testing.T) {
	cause := errors.New("cause")
	e := &RunError{Kind: api.KindTrap, Message: "the guest trapped", Cause: cause}
	require.Equal(t, "trap: the guest trapped", e.Error())
	require.ErrorIs(t, e, cause)
}
