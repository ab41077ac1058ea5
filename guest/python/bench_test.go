package python

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// plain is the benchmarks' wazero runtime: as wasmhost's, without
// WithCloseOnContextDone, whose check at every loop header and function
// entry (the tests' runtime has it, for FuzzStart) makes both interpreters
// several times slower (an awaited Python call 91 µs with it, 16 µs without,
// in one run). It holds python.wasm and the QuickJS guest (guest/wasm/
// guest.wasm, make guest), a baseline in the same run.
var plain struct {
	once              sync.Once
	rt                wazero.Runtime
	python, quickjs   wazero.CompiledModule
	err, quickjsError error
}

func plainRuntime(b *testing.B) {
	b.Helper()
	wasm := requireBuilt(b)
	plain.once.Do(func() {
		ctx := context.Background()
		plain.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
		wasi_snapshot_preview1.MustInstantiate(ctx, plain.rt)
		if plain.err = instantiateHost(ctx, plain.rt); plain.err != nil {
			return
		}
		if plain.python, plain.err = plain.rt.CompileModule(ctx, wasm); plain.err != nil {
			return
		}
		var js []byte
		if js, plain.quickjsError = os.ReadFile("../wasm/guest.wasm"); plain.quickjsError == nil {
			plain.quickjs, plain.quickjsError = plain.rt.CompileModule(ctx, js)
		}
	})
	if plain.err != nil {
		b.Fatalf("the benchmarks' runtime: %v", plain.err)
	}
}

// plainGuest is an initialised instance of compiled in the plain runtime.
func plainGuest(b *testing.B, compiled wazero.CompiledModule, what string) *guest {
	b.Helper()
	g := instantiateGuest(b, plain.rt, compiled)
	b.Cleanup(g.close)
	if st := g.call("ptcx_init", 0, 0); st != 0 {
		b.Fatalf("%s ptcx_init: %d", what, st)
	}
	return g
}

func quickjsGuest(b *testing.B) *guest {
	b.Helper()
	plainRuntime(b)
	if plain.quickjsError != nil {
		b.Skipf("the QuickJS guest: %v", plain.quickjsError)
	}
	return plainGuest(b, plain.quickjs, "QuickJS")
}

func newGuestB(b *testing.B) *guest {
	b.Helper()
	plainRuntime(b)
	return plainGuest(b, plain.python, "python.wasm")
}

// BenchmarkAwaitedCall is one awaited nested call (the call, its resume),
// in each guest: a session's program of 100 calls and one of none, in turn,
// ns/call their difference over 100.
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
// compile, run, the result) in each guest. A QuickJS session nests each
// program in the ones before it; a program that declares nothing adds
// nothing a later one's compile or names pay for (guest/glue/scopes.patch),
// only its scope's memory.
func BenchmarkOnePlusOne(b *testing.B) {
	for _, c := range []struct {
		name, code string
		guest      func(*testing.B) *guest
	}{
		{"python", "1 + 1", newGuestB},
		{"quickjs", "return 1 + 1", quickjsGuest},
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
