package python

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// The QuickJS guest (guest/wasm/guest.wasm, make guest) under the same fake
// host, a baseline for the Python guest's benchmarks in the same run.
var quickjs struct {
	once     sync.Once
	compiled wazero.CompiledModule
	err      error
}

func quickjsGuest(b *testing.B) *guest {
	b.Helper()
	rt, _ := compiledGuest(b)
	quickjs.once.Do(func() {
		var wasm []byte
		if wasm, quickjs.err = os.ReadFile("../wasm/guest.wasm"); quickjs.err == nil {
			quickjs.compiled, quickjs.err = rt.CompileModule(context.Background(), wasm)
		}
	})
	if quickjs.err != nil {
		b.Skipf("the QuickJS guest: %v", quickjs.err)
	}
	g := &guest{tb: b}
	*g = *instantiateGuest(b, rt, quickjs.compiled)
	b.Cleanup(g.close)
	if st := g.call("ptcx_init", 0, 0); st != 0 {
		b.Fatalf("QuickJS ptcx_init: %d", st)
	}
	return g
}

// BenchmarkAwaitedCall is one awaited nested call (the call, its resume),
// in each guest: a session's program of 100 calls and one of none, in turn,
// ns/call their difference over 100 (a QuickJS session nests each program
// in the ones before it, which slows its later programs: the program
// without calls pays that too).
func BenchmarkAwaitedCall(b *testing.B) {
	const n = 100
	for _, c := range []struct {
		name, calls, none string
		guest             func(*testing.B) *guest
	}{
		{"python", "for i in range(100):\n    await tools.echo(i=i)", "for i in range(0):\n    await tools.echo(i=i)", newGuestB},
		{"quickjs", "for (let i = 0; i < 100; i++) await tools.echo({i});", "for (let i = 0; i < 0; i++) await tools.echo({i});", quickjsGuest},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := c.guest(b)
			var with, without time.Duration
			run := func(code string) time.Duration {
				start := time.Now()
				g.call("ptcx_next")
				g.reset()
				g.drive(g.start(config{Code: code, Tools: []string{"echo"}, Session: true}), func(c call) (int32, string) { return 1, c.Args })
				return time.Since(start)
			}
			for b.Loop() {
				with += run(c.calls)
				without += run(c.none)
			}
			b.ReportMetric(float64((with-without).Nanoseconds())/float64(b.N*n), "ns/call")
		})
	}
}

// BenchmarkOnePlusOne is a session's program 1 + 1 (ptcx_next, start,
// compile, run, the result). No QuickJS figure: its session nests each
// program in all the ones before it, so its figure would grow with b.N.
func BenchmarkOnePlusOne(b *testing.B) {
	g := newGuest(b)
	for b.Loop() {
		g.call("ptcx_next")
		g.reset()
		g.drive(g.start(config{Code: "1 + 1", Session: true}), echo)
	}
}

func newGuestB(b *testing.B) *guest { return newGuest(b) }

// BenchmarkInstantiateInit is a fresh instance (memory, data, _initialize)
// and ptcx_init (CPython and the runtime's imports): what an image saves.
func BenchmarkInstantiateInit(b *testing.B) {
	rt, compiled := compiledGuest(b)
	for b.Loop() {
		g := instantiateGuest(b, rt, compiled)
		if st := g.call("ptcx_init", 0, 0); st != 0 {
			b.Fatalf("ptcx_init: %d", st)
		}
		g.close()
	}
}
