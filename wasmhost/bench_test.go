package wasmhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// echo answers every call at once, inside Dispatch, with its arguments.
var echo = wasmhost.DispatcherFunc(func(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
	done(wasmhost.CallResult{OK: true, Value: args})
})

func runOrFail(b *testing.B, rt *wasmhost.Runtime, p wasmhost.Program, d wasmhost.Dispatcher) wasmhost.Outcome {
	out, err := rt.Run(context.Background(), p, d)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkRuntime_Run_helloWorld is the cold start of one run, end to end:
// a fresh instance, the engine and prelude initialised, a program compiled,
// run, and its output collected. Target: 3 ms.
func BenchmarkRuntime_Run_helloWorld(b *testing.B) {
	rt := newRuntime(b, testConfig())
	p := wasmhost.Program{JS: `console.log("hello, world"); return 42`, Tools: []string{"echo"}}
	b.ReportAllocs()
	for b.Loop() {
		runOrFail(b, rt, p, echo)
	}
}

// BenchmarkRuntime_Run_nestedCall measures one awaited nested call: a run of
// `calls` sequential awaits of an echo tool, minus the cost of the same run
// without calls (measured first), divided by the number of calls. Target:
// 10 µs per call.
func BenchmarkRuntime_Run_nestedCall(b *testing.B) {
	benchNestedCall(b, testConfig())
}

func benchNestedCall(b *testing.B, cfg wasmhost.Config) {
	const calls = 2000
	rt := newRuntime(b, cfg.WithLimits(api.Limits{MaxCalls: calls}))
	body := `for (let i = 0; i < ` + strconv.Itoa(calls) + `; i++) await tools.echo({i});`
	empty := wasmhost.Program{JS: `for (let i = 0; i < ` + strconv.Itoa(calls) + `; i++) await {i};`, Tools: []string{"echo"}}
	var base time.Duration
	for range 20 {
		start := time.Now()
		runOrFail(b, rt, empty, echo)
		base += time.Since(start)
	}
	base /= 20
	p := wasmhost.Program{JS: body, Tools: []string{"echo"}}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		runOrFail(b, rt, p, echo)
	}
	perRun := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(perRun-base)/calls, "ns/call")
}

// BenchmarkRuntime_Run_fanOut is a Promise.all of 100 calls to a tool that
// answers after 20 ms from another goroutine. Target: within 2x of one
// call's latency (x-one-call ≤ 2).
func BenchmarkRuntime_Run_fanOut(b *testing.B) {
	benchFanOut(b, testConfig())
}

func benchFanOut(b *testing.B, cfg wasmhost.Config) {
	const latency = 20 * time.Millisecond
	rt := newRuntime(b, cfg)
	slow := wasmhost.DispatcherFunc(func(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
		time.AfterFunc(latency, func() { done(wasmhost.CallResult{OK: true, Value: args}) })
	})
	p := wasmhost.Program{JS: `return (await Promise.all(Array.from({length: 100}, (_, i) => tools.slow({i})))).length`,
		Tools: []string{"slow"}}
	start := time.Now()
	for b.Loop() {
		runOrFail(b, rt, p, slow)
	}
	perRun := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(perRun)/float64(latency), "x-one-call")
}

// BenchmarkRuntime_idleInstance measures the memory of one live instance
// waiting on a nested call, with 100 such runs parked at once: the growth of
// the process's resident memory (linear memories are mappings outside the Go
// heap; the heap is returned to the OS before the baseline, so that its
// growth shows too), and of the Go heap alone, per instance. Target: 2 MB
// per instance.
func BenchmarkRuntime_idleInstance(b *testing.B) {
	const live = 100
	rt := newRuntime(b, testConfig())
	p := wasmhost.Program{JS: `console.log("waiting"); await tools.wait(); return 1`, Tools: []string{"wait"}}
	var heap, rss float64
	for b.Loop() {
		heap0, rss0 := memoryNow(b)
		var started, finished sync.WaitGroup
		release := make(chan struct{})
		started.Add(live)
		for range live {
			finished.Go(func() {
				d := wasmhost.DispatcherFunc(func(_ string, _ json.RawMessage, done func(wasmhost.CallResult)) {
					started.Done()
					go func() {
						<-release
						done(wasmhost.CallResult{OK: true})
					}()
				})
				runOrFail(b, rt, p, d)
			})
		}
		started.Wait()
		heap1, rss1 := memoryNow(b)
		close(release)
		finished.Wait()
		heap += float64(heap1-heap0) / live
		rss += float64(rss1-rss0) / live
	}
	b.ReportMetric(rss/float64(b.N), "rss-bytes/instance")
	b.ReportMetric(heap/float64(b.N), "heap-bytes/instance")
}

// memoryNow returns the Go heap in use and the process's resident memory,
// after a collection that returns free heap to the OS.
func memoryNow(b *testing.B) (heap, rss int64) {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skipf("no /proc/self/statm to read resident memory from: %v", err)
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(statm), &size, &resident); err != nil {
		b.Fatalf("/proc/self/statm: %v", err)
	}
	return int64(ms.HeapInuse), resident * int64(os.Getpagesize())
}
