package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/meminfo"
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

// BenchmarkPool_idleRSS is issue #12's "idle pooled instance ≤ 0.3 MiB
// resident each (100 live)": a Runtime whose warm pool holds 100 idle
// instances, and the resident memory each adds to the process (Linux: the
// RSS, read after the Go heap was collected and its free pages given back,
// so that it counts what an idle instance keeps: wazero's module instance,
// ours, and the pages of its linear memory that are backed), two ways:
//   - restored: instances the pool's filler restored from the image, as the
//     pool holds them before any run took them;
//   - recycled: instances that each served a trivial run (100 runs live at
//     once, so that each has its own instance) and went back to the pool,
//     reset to the image (pool_recycle.go), beside the filler's new ones.
func BenchmarkPool_idleRSS(b *testing.B) {
	const size = 100
	const memory = 16 << 20
	cfg := testConfig().WithPool(size).WithLimits(api.Limits{MemoryBytes: memory}).
		WithMaxCommittedMemory(4 * size * memory)
	b.Run("restored", func(b *testing.B) {
		for b.Loop() {
			rt := newRuntime(b, cfg)
			before := settledRSS(b)
			runOrFail(b, rt, wasmhost.Program{JS: `return 1`}, echo) // starts the filler
			waitPool(b, rt, size)
			idle := rt.PoolStats().Idle // the filler's, and the first run's instance, recycled
			b.ReportMetric(float64(settledRSS(b)-before)/float64(idle)/(1<<20), "MiB/instance")
			require.NoError(b, rt.Close(context.Background()))
		}
	})
	b.Run("recycled", func(b *testing.B) {
		for b.Loop() {
			rt := newRuntime(b, cfg)
			runOrFail(b, rt, wasmhost.Program{JS: `return 1`}, echo)
			waitPool(b, rt, size)
			before, recycled := settledRSS(b), rt.PoolStats().Recycled
			runLive(b, rt, size)
			waitPool(b, rt, 2*size) // the filler replaced the instances the runs took
			n := rt.PoolStats().Recycled - recycled
			require.Equal(b, int64(size), n, "every run's instance was recycled")
			b.ReportMetric(float64(settledRSS(b)-before)/float64(n)/(1<<20), "MiB/instance")
			require.NoError(b, rt.Close(context.Background()))
		}
	})
}

// runLive runs n trivial programs at once: each calls a tool that answers
// once all n have called it, so that each run holds its own instance.
func runLive(b *testing.B, rt *wasmhost.Runtime, n int) {
	var called sync.WaitGroup
	called.Add(n)
	answer := make(chan struct{})
	go func() { called.Wait(); close(answer) }()
	d := wasmhost.DispatcherFunc(func(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
		called.Done()
		go func() { <-answer; done(wasmhost.CallResult{OK: true, Value: args}) }()
	})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := rt.Run(context.Background(), wasmhost.Program{JS: `return await tools.echo({})`, Tools: []string{"echo"}}, d); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}

// waitPool waits, at most a minute, until the pool holds n idle instances.
func waitPool(b *testing.B, rt *wasmhost.Runtime, n int) {
	for deadline := time.Now().Add(time.Minute); rt.PoolStats().Idle < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the pool did not fill to %d in a minute: %+v", n, rt.PoolStats())
		}
	}
}

// settledRSS returns the process's resident memory once the Go heap is
// collected and its free pages are given back to the kernel.
func settledRSS(b *testing.B) int64 {
	debug.FreeOSMemory()
	return rss(b)
}

// BenchmarkStartup_parkedRSS holds 100 runs live, each parked on a call to
// a tool that never answers, and reports the resident memory each adds
// (Linux): a live run's instance, as bench's rss_per_live_instance counts
// it, on each path.
func BenchmarkStartup_parkedRSS(b *testing.B) {
	const live = 100
	for _, path := range startupPaths {
		b.Run(path.name, func(b *testing.B) {
			const memory = 16 << 20
			rt := newRuntime(b, path.cfg().WithLimits(api.Limits{MemoryBytes: memory}).
				WithMaxCommittedMemory((live+wasmhost.DefaultPoolSize)*memory))
			hang := wasmhost.DispatcherFunc(func(string, json.RawMessage, func(wasmhost.CallResult)) {})
			for b.Loop() {
				before := settledRSS(b)
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
				b.ReportMetric(float64(settledRSS(b)-before)/live/(1<<20), "MiB/instance")
				cancel()
				wg.Wait()
			}
		})
	}
}

// rss returns the process's proportional resident memory in bytes (Pss:
// a page shared by n mappings counts 1/n, as bench's memory workloads
// read it; statm's resident memory counts a page of the image once per
// instance that maps it).
func rss(b *testing.B) int64 {
	n, err := meminfo.Pss()
	if errors.Is(err, fs.ErrNotExist) {
		b.Skip("resident memory is read from " + meminfo.Rollup + " (Linux 4.14 on)")
	}
	if err != nil {
		b.Fatal(err)
	}
	return n
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
