package wasmhost_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// fillGuest is a hand-made guest whose ptcx_start fills 16 MiB of its
// memory with memory.fill, again and again, count times (0: for ever),
// and returns without a result: code that never reaches QuickJS's
// interrupt handler, so only the loop meter brings it back to the host.
func fillGuest(count byte) []byte {
	const pages = 257 // 16 MiB and a page
	section := func(id byte, body ...byte) []byte {
		return append(append([]byte{id}, leb(len(body))...), body...)
	}
	name := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	fn := func(locals byte, body ...byte) []byte {
		b := []byte{0x00}
		if locals > 0 {
			b = []byte{0x01, locals, 0x7f}
		}
		b = append(b, body...)
		b = append(b, 0x0b)
		return append(leb(len(b)), b...)
	}
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = append(m, section(1, 4,
		0x60, 0x00, 0x01, 0x7f, // 0: () -> i32
		0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, // 1: (i32, i32) -> i32
		0x60, 0x01, 0x7f, 0x01, 0x7f, // 2: (i32) -> i32
		0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, // 3: (i32 x4) -> i32
	)...)
	imp := append([]byte{1}, name("ptcx")...)
	imp = append(append(imp, name("poll")...), 0x00, 0x00)
	m = append(m, section(2, imp...)...)
	m = append(m, section(3, 7, 0, 1, 2, 2, 1, 3, 2)...)
	m = append(m, section(5, append([]byte{1, 0x00}, leb(pages)...)...)...)
	exp := []byte{8}
	exp = append(append(exp, name("memory")...), 0x02, 0x00)
	for i, n := range []string{"ptcx_abi_version", "ptcx_init", "ptcx_buffer", "ptcx_prelude_bytecode", "ptcx_start", "ptcx_resume", "ptcx_timer"} {
		exp = append(append(exp, name(n)...), 0x00, byte(i+1))
	}
	m = append(m, section(7, exp...)...)
	var code []byte
	code = append(code, 7)
	code = append(code, fn(0, 0x41, 0x03)...)                                                 // abi_version: 3
	code = append(code, fn(0, 0x41, 0x00)...)                                                 // init: done
	code = append(code, fn(0, 0x41, 0x80, 0x08)...)                                           // buffer: 1024
	code = append(code, fn(0, 0x20, 0x00, 0x41, 0x04, 0x36, 0x02, 0x00, 0x41, 0x80, 0x10)...) // bytecode: *len_out = 4; return 2048
	start := []byte{
		0x41, count, 0x21, 0x02, // n = count (local 2, after the two parameters)
		0x03, 0x40, // loop
		0x41, 0x80, 0x80, 0x04, 0x41, 0x07, 0x41, 0x80, 0x80, 0x80, 0x08, 0xfc, 0x0b, 0x00, // memory.fill(64 KiB, 7, 16 MiB)
		0x20, 0x02, 0x41, 0x01, 0x6b, 0x22, 0x02, // n = n - 1
		0x0d, 0x00, // br_if 0 while n != 0 (for ever from 0)
		0x0b,       // end
		0x41, 0x00, // done
	}
	code = append(code, fn(1, start...)...)
	code = append(code, fn(0, 0x41, 0x00)...) // resume
	code = append(code, fn(0, 0x41, 0x00)...) // timer
	return append(append(m, 10), append(leb(len(code)), code...)...)
}

// A guest looping in code that QuickJS never sees (memory.fill, 16 MiB at
// a time) is stopped at its limits and on cancellation, not abandoned, on
// both engines: the meter charges a bulk operation's bytes before it and
// polls at every loop header.
func TestRuntime_Run_stopsABulkMemoryLoop(t *testing.T) {
	rt := newRuntime(t, testConfig().WithGuest(fillGuest(0)))
	tests := []struct {
		name   string
		limits api.Limits
		cancel time.Duration // 0: not cancelled
		kind   api.Kind
		msg    string
	}{
		{"compute limit", api.Limits{ComputeTime: 300 * time.Millisecond}, 0, api.KindTimeout, "compute time limit of 300ms"},
		{"wall limit", api.Limits{WallTime: time.Second, ComputeTime: 20 * time.Second}, 0, api.KindTimeout, "wall time limit of 1s"},
		{"cancelled", api.Limits{ComputeTime: 20 * time.Second}, time.Second, api.KindAbort, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			start := time.Now()
			_, err := rt.Run(ctx, wasmhost.Program{JS: "x", Limits: tt.limits}, &tools{})
			elapsed := time.Since(start)
			re := runErr(t, err)
			require.Equal(t, tt.kind, re.Kind, re.Message)
			require.Contains(t, re.Message, tt.msg)
			require.NotErrorIs(t, re, wasmhost.ErrAbandoned, "the guest was stopped at a poll")
			require.Less(t, elapsed, 10*time.Second)
		})
	}
	// Below its limits the same loop, run a few times, finishes: it is
	// the limit that stops it, not the loop.
	rt = newRuntime(t, testConfig().WithGuest(fillGuest(3)))
	_, err := rt.Run(context.Background(), wasmhost.Program{JS: "x", Limits: api.Limits{ComputeTime: 20 * time.Second}}, &tools{})
	require.NoError(t, err)
}
