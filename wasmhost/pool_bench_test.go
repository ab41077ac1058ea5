package wasmhost_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// The start-up benchmarks run each case twice in one run: "image" (the
// default: restored from the initialised image, from the warm pool, with
// the bytecode cache) and "fresh" (WithImage(false) and no bytecode cache:
// every run instantiates and initialises a guest and compiles its program,
// the path before images), so that the ratio between them is measured
// under the same load.
var startupPaths = []struct {
	name string
	cfg  func() wasmhost.Config
}{
	{"image", func() wasmhost.Config { return testConfig() }},
	{"fresh", func() wasmhost.Config { return testConfig().WithImage(false).WithBytecodeCache(0, 0) }},
}

// BenchmarkStartup_trivial is a trivial run end to end, of a program seen
// before.
func BenchmarkStartup_trivial(b *testing.B) {
	for _, path := range startupPaths {
		b.Run(path.name, func(b *testing.B) {
			rt := newRuntime(b, path.cfg())
			p := wasmhost.Program{JS: `return 1`, Tools: []string{"echo"}}
			runOrFail(b, rt, p, echo)
			b.ReportAllocs()
			for b.Loop() {
				runOrFail(b, rt, p, echo)
			}
		})
	}
}

// BenchmarkStartup_newProgram is a run of a program never seen before.
func BenchmarkStartup_newProgram(b *testing.B) {
	for _, path := range startupPaths {
		b.Run(path.name, func(b *testing.B) {
			rt := newRuntime(b, path.cfg())
			i := 0
			for b.Loop() {
				i++
				runOrFail(b, rt, wasmhost.Program{JS: `const x = ` + strconv.Itoa(i) + `; return x * 2`}, echo)
			}
		})
	}
}

// BenchmarkStartup_runsPerSecond is trivial runs from as many goroutines as
// cores, reported as runs per second.
func BenchmarkStartup_runsPerSecond(b *testing.B) {
	for _, path := range startupPaths {
		b.Run(path.name, func(b *testing.B) {
			rt := newRuntime(b, path.cfg())
			p := wasmhost.Program{JS: `return 1`}
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := rt.Run(context.Background(), p, echo); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
		})
	}
}

// BenchmarkStartup_idleRSS holds 100 runs live, each waiting on a tool that
// never answers, and reports the resident memory each adds (Linux).
func BenchmarkStartup_idleRSS(b *testing.B) {
	const live = 100
	for _, path := range startupPaths {
		b.Run(path.name, func(b *testing.B) {
			const memory = 16 << 20
			rt := newRuntime(b, path.cfg().WithLimits(api.Limits{MemoryBytes: memory}).
				WithMaxCommittedMemory((live+wasmhost.DefaultPoolSize)*memory))
			hang := wasmhost.DispatcherFunc(func(string, json.RawMessage, func(wasmhost.CallResult)) {})
			for b.Loop() {
				runtime.GC()
				before := rss(b)
				ctx, cancel := context.WithCancel(context.Background())
				var started, wg sync.WaitGroup
				started.Add(live)
				var once [live]sync.Once
				for i := range live {
					wg.Go(func() {
						d := wasmhost.DispatcherFunc(func(n string, a json.RawMessage, done func(wasmhost.CallResult)) {
							once[i].Do(started.Done)
							hang(n, a, done)
						})
						_, err := rt.Run(ctx, wasmhost.Program{JS: `await tools.hang({})`, Tools: []string{"hang"}}, d)
						once[i].Do(func() {
							b.Errorf("the run ended before it called its tool: %v", err)
							started.Done()
						})
					})
				}
				started.Wait()
				runtime.GC()
				b.ReportMetric(float64(rss(b)-before)/live/(1<<20), "MiB/instance")
				cancel()
				wg.Wait()
			}
		})
	}
}

// rss returns the process's resident memory in bytes.
func rss(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skip("resident memory is read from /proc/self/statm (Linux)")
	}
	f := strings.Fields(string(data))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// BenchmarkStartup_nestedCall is one awaited nested call (benchNestedCall)
// on each path: the image changes how an instance starts, not how it calls.
func BenchmarkStartup_nestedCall(b *testing.B) {
	for _, path := range startupPaths {
		b.Run(path.name, func(b *testing.B) { benchNestedCall(b, path.cfg()) })
	}
}

// runOrFail runs p and stops the benchmark when the run fails.
func runOrFail(b *testing.B, rt *wasmhost.Runtime, p wasmhost.Program, d wasmhost.Dispatcher) wasmhost.Outcome {
	out, err := rt.Run(context.Background(), p, d)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
