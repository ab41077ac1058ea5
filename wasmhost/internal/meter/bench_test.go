package meter

import (
	"fmt"
	"testing"
	"time"

	"github.com/ptcx/ptcx/guest"
)

// BenchmarkInstrumentGuest measures instrumenting the real guest, as the
// host would at load time, without and with bulk-memory charges.
func BenchmarkInstrumentGuest(b *testing.B) {
	wasm := guest.Wasm()
	for _, bulkBytes := range []uint32{0, 4096} {
		b.Run(fmt.Sprintf("BulkBytes=%d", bulkBytes), func(b *testing.B) {
			opt := Options{Module: "ptcx", Name: "poll", Interval: 10000, BulkBytes: bulkBytes}
			b.SetBytes(int64(len(wasm)))
			b.ReportAllocs()
			var elapsed time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := Instrument(wasm, opt); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(t0)
			}
			b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(b.N), "ms/op")
		})
	}
}

// tightLoop is a module importing ptcx.poll and exporting run(n) -> i32,
// a loop of n iterations adding the counter into an accumulator.
func tightLoop() []byte {
	// Locals: n(0) i(1) acc(2).
	code := cat(
		loop(tEmpty),
		localGet(2), localGet(1), i32Add, localSet(2),
		localGet(1), i32Const(1), i32Add, localTee(1),
		localGet(0), i32LtU, brIf(0),
		end,
		localGet(2),
	)
	return mod(
		sec(1, vecOf(fn(nil, bs(tI32)), fn(bs(tI32), bs(tI32)))),
		sec(2, vecOf(importFunc("ptcx", "poll", 0))),
		sec(3, vecOf(uleb(1))),
		sec(7, vecOf(export("run", 0, 1))),
		sec(10, vecOf(body([][2]uint32{{2, tI32}}, code))),
	)
}

// BenchmarkLoop runs 100M iterations of a tight loop under wazero's
// compiler: plain, metered (interval 10000, without
// WithCloseOnContextDone) and plain with WithCloseOnContextDone(true).
func BenchmarkLoop(b *testing.B) {
	const n = 100_000_000
	metered, err := Instrument(tightLoop(), Options{Module: "ptcx", Name: "poll", Interval: 10000})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name        string
		wasm        []byte
		closeOnDone bool
		polls       int64
	}{
		{"plain", tightLoop(), false, 0},
		{"metered", metered, false, n / 10000},
		{"closeOnContextDone", tightLoop(), true, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHost(b, bc.closeOnDone)
			m := h.instantiate(b, bc.wasm)
			sum := uint64(n) * (n - 1) / 2
			want := sum & 0xffffffff
			calls := int64(0)
			for b.Loop() {
				if got := h.call(b, m, "run", n)[0]; got != want {
					b.Fatalf("run returned %d, want %d", got, want)
				}
				calls++
			}
			if got := h.polls.Load(); got/calls != bc.polls {
				b.Fatalf("%d polls in %d calls, want %d per call", got, calls, bc.polls)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/iter")
		})
	}
}

// BenchmarkGuestJS runs a JavaScript loop of 3M iterations in the real
// guest: plain, metered (interval 10000), metered with bulk-memory charges
// (BulkBytes 4096) and plain with WithCloseOnContextDone(true). ns/op
// includes instantiation and ptcx_init; start-ms/op is ptcx_start alone.
func BenchmarkGuestJS(b *testing.B) {
	metered, err := Instrument(guest.Wasm(), Options{Module: "ptcx", Name: "poll", Interval: 10000})
	if err != nil {
		b.Fatal(err)
	}
	meteredBulk, err := Instrument(guest.Wasm(), Options{Module: "ptcx", Name: "poll", Interval: 10000, BulkBytes: 4096})
	if err != nil {
		b.Fatal(err)
	}
	const code = "let s = 0; for (let i = 0; i < 3e6; i++) s += i % 7; return s"
	for _, bc := range []struct {
		name        string
		wasm        []byte
		closeOnDone bool
	}{
		{"plain", guest.Wasm(), false},
		{"metered", metered, false},
		{"metered-bulk", meteredBulk, false},
		{"closeOnContextDone", guest.Wasm(), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g := newGuestHost(b, bc.wasm, bc.closeOnDone)
			var run time.Duration
			for b.Loop() {
				if st, err := g.start(b, code, 0); err != nil || st != 0 || g.result != "8999994" {
					b.Fatalf("status %d, error %v, result %q", st, err, g.result)
				}
				run += g.startTime
			}
			b.ReportMetric(float64(run.Microseconds())/1000/float64(b.N), "start-ms/op")
		})
	}
}
