package python

import (
	"context"
	"os"
	"sync"
	"testing"

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

// BenchmarkAwaitedCall is one awaited nested call (the call, its resume)
// in a session's program of 100 calls, in each guest; ns/call is per call.
func BenchmarkAwaitedCall(b *testing.B) {
	for _, c := range []struct {
		name, code string
		guest      func(*testing.B) *guest
	}{
		{"python", "for i in range(100):\n    await tools.echo(i=i)", newGuestB},
		{"quickjs", "for (let i = 0; i < 100; i++) await tools.echo({i});", quickjsGuest},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := c.guest(b)
			for b.Loop() {
				g.call("ptcx_next")
				g.reset()
				g.drive(g.start(config{Code: c.code, Tools: []string{"echo"}, Session: true}), func(c call) (int32, string) { return 1, c.Args })
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/call")
		})
	}
}

// BenchmarkOnePlusOne is a session's program 1 + 1 (ptcx_next, start,
// the result) in each guest.
func BenchmarkOnePlusOne(b *testing.B) {
	for _, c := range []struct {
		name, code string
		guest      func(*testing.B) *guest
	}{
		{"python", "1 + 1", newGuestB},
		{"quickjs", "return 1 + 1;", quickjsGuest},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := c.guest(b)
			for b.Loop() {
				g.call("ptcx_next")
				g.reset()
				g.drive(g.start(config{Code: c.code, Session: true}), echo)
			}
		})
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
