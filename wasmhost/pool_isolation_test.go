package wasmhost_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// SoakEnv set to a count runs the isolation property test with that many
// runs (make soak sets 10000) instead of the quick default.
const soakEnv = "PTCX_SOAK_RUNS"

// polluters try to leave a trace for a later run: in globals, in
// prototypes and built-ins, in the heap (retained and garbage), in the atom
// table and the symbol registry, in timers and jobs still queued at the
// end.
var polluters = []string{
	`globalThis.leak = 1; var leakVar = 2; globalThis[Symbol.for("leak")] = 3; return 0`,
	`Object.prototype.leak = 1; Array.prototype.push = function () { return -1 }; return 0`,
	`Math.random = () => 0.5; JSON.parse = () => "leak"; Date.now = () => 0; return 0`,
	`globalThis.big = new Array(200000).fill(0).map((_, i) => "s" + i); return 0`,
	`for (let i = 0; i < 5000; i++) globalThis["atom_leak_" + i] = Symbol.for("atom_sym_" + i); return 0`,
	`try { delete globalThis.console; tools.echo = null } catch {} globalThis.eval = null; Reflect.defineProperty(globalThis, "hidden", {value: 1}); return 0`,
	`String.prototype.toString = () => "leak"; Function.prototype.call = null; Promise.prototype.then = null; return 0`,
	`Object.freeze(Object.prototype); Object.freeze(Array.prototype); return 0`,
	`setTimeout(() => { globalThis.late = 1 }, 0); Promise.resolve().then(() => { globalThis.job = 1 }); return 0`,
	`performance.now = () => -1; globalThis.performance.leak = 1; return 0`,
}

// checker reports what a run sees of what polluters touch; everything but
// the random number must be the same in every run.
const checker = `
const own = (o) => Object.getOwnPropertyNames(o).concat(Object.getOwnPropertySymbols(o).map(String)).sort().join(",");
return {
  globals: own(globalThis),
  objectProto: own(Object.prototype), arrayProto: own(Array.prototype), stringProto: own(String.prototype),
  push: [].push(1), json: JSON.parse("1"), dateNowIsNow: Math.abs(Date.now() - new Date().getTime()) < 60000,
  frozen: Object.isFrozen(Object.prototype) || Object.isFrozen(Array.prototype),
  console: typeof console, echo: typeof tools.echo, eval: typeof eval, str: "a".toString(),
  call: typeof Function.prototype.call, then: typeof Promise.prototype.then,
  perf: own(performance) + typeof performance.now, nowIsSmall: performance.now() >= 0 && performance.now() < 60000,
  random: Math.random(),
}`

// TestRuntime_pool_isolation is the isolation property test: runs on
// pooled, restored instances alternate with programs trying to leave a
// trace; none is visible to a later run, and a later run's memory is the
// same as on a fresh Runtime's first run (no heap or atom table carried
// over). PTCX_SOAK_RUNS=10000 runs the full property (make soak).
func TestRuntime_pool_isolation(t *testing.T) {
	runs := 400
	if testing.Short() {
		runs = 100
	}
	if s := os.Getenv(soakEnv); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "%s=%q is not a count", soakEnv, s)
		runs = n
	}
	// The expected view: a checker on a Runtime that never ran anything.
	baseline, baseMemory := check(t, newRuntime(t, testConfig().WithImage(false)))
	delete(baseline, "random")

	// The checker can fail: it sees every polluter's trace in the run that
	// left it.
	fresh := newRuntime(t, testConfig())
	for i, p := range polluters {
		got, memory := checkAfter(t, fresh, p)
		delete(got, "random")
		require.False(t, assert.ObjectsAreEqual(baseline, got) && memory == baseMemory, "polluter %d left no trace the checker sees", i)
	}

	// Hot: the pool keeps every recycled instance's pages backed (4
	// goroutines, 4 hot). Cooled: it keeps none hot, and cools every one
	// (pool_recycle.go).
	configs := []struct {
		name   string
		hot    int
		cooled bool
	}{
		{"hot", 4, false},
		{"cooled", 0, true},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			rt := newRuntime(t, testConfig().WithPool(4))
			wasmhost.SetPoolHot(rt, c.hot)
			isolated(t, rt, runs, baseline, baseMemory)
			s := rt.PoolStats()
			require.Positive(t, s.Hits, "pooled instances were used: %+v", s)
			if recycledPerRun(t, rt) > 0 {
				require.Positive(t, s.Recycled, "runs' instances were reset and reused: %+v", s)
			} else {
				require.Zero(t, s.Recycled, "nothing recycled on this engine: %+v", s)
			}
			if c.cooled {
				require.Equal(t, s.Recycled, s.Cooled, "every recycled instance was cooled: %+v", s)
			} else {
				require.Zero(t, s.Cooled, "none was cooled: %+v", s)
			}
			t.Logf("%d runs; pool %+v", runs, s)
		})
	}
}

// isolated runs runs programs on rt from 4 goroutines, polluters
// alternating with the checker, and requires every checker's view to be
// baseline, its memory baseMemory, and Math.random never to repeat.
func isolated(t *testing.T, rt *wasmhost.Runtime, runs int, baseline map[string]any, baseMemory int64) {
	const workers = 4
	var mu sync.Mutex
	randoms := map[float64]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < runs; i += workers {
				if i%2 == 0 {
					_, re, _ := runJS(t, rt, polluters[(i/2)%len(polluters)], api.Limits{})
					if !assert.Nil(t, re, "polluter %d", (i/2)%len(polluters)) {
						return
					}
					continue
				}
				got, memory := check(t, rt)
				mu.Lock()
				randoms[got["random"].(float64)] = i
				mu.Unlock()
				delete(got, "random")
				if !assert.Equal(t, baseline, got, "run %d saw a trace of an earlier run", i) ||
					!assert.Equal(t, baseMemory, memory, "run %d started with more memory than a fresh instance", i) {
					return
				}
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	require.Len(t, randoms, runs/2, "Math.random repeated across runs")
}

// check runs the checker; it may run on any goroutine (it only asserts).
func check(t *testing.T, rt *wasmhost.Runtime) (map[string]any, int64) {
	return checkAfter(t, rt, "")
}

// checkAfter runs polluter, then the checker, in one run.
func checkAfter(t *testing.T, rt *wasmhost.Runtime, polluter string) (map[string]any, int64) {
	t.Helper()
	js := checker
	if polluter != "" {
		js = "await (async () => {" + polluter + "})();\n" + checker
	}
	out, re, _ := runJS(t, rt, js, api.Limits{})
	assert.Nil(t, re)
	v := map[string]any{"random": -1.0}
	assert.NoError(t, json.Unmarshal(out.Result, &v), fmt.Sprint(string(out.Result)))
	return v, out.Stats.Memory
}
