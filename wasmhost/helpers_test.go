package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// cacheDir is the compilation cache the tests' Runtimes share: ptcx's own
// (wasmhost.DefaultCacheDir), whose entries are keyed by the compiled
// module's hash and wazero's version, so that a test binary built with
// -race, whose compiler is instrumented (QuickJS takes seconds and Python
// about a minute to compile there), finds what an uninstrumented build
// compiled (make test warms it first). Tests of the cache itself use
// directories of their own. Without a user cache directory, a temporary
// one, removed at the end.
var cacheDir = wasmhost.DefaultCacheDir()

func TestMain(m *testing.M) {
	var temp string
	if cacheDir == "" {
		dir, err := os.MkdirTemp("", "wasmhost-test-cache-")
		if err != nil {
			panic(err)
		}
		cacheDir, temp = dir, dir
	}
	// The fuzzer minimises each input that finds new coverage in a number
	// of runs quadratic in its size, each slowed by this binary's coverage
	// counters (wazero's compiler is instrumented too): under the default
	// minute, a fuzz target here stops for a minute at each. A second
	// keeps it making progress; -fuzzminimizetime still decides.
	if f := flag.Lookup("test.fuzzminimizetime"); f != nil {
		_ = f.Value.Set("1s")
	}
	code := m.Run()
	if temp != "" {
		os.RemoveAll(temp)
	}
	os.Exit(code)
}

func testConfig() wasmhost.Config {
	return wasmhost.NewConfig().WithCompilationCacheDir(cacheDir)
}

// newRuntime returns a Runtime closed when the test ends.
func newRuntime(t testing.TB, cfg wasmhost.Config) *wasmhost.Runtime {
	t.Helper()
	rt, err := wasmhost.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	return rt
}

// sharedRuntime is one default Runtime shared by the tests that need
// nothing special, which also shows runs do not disturb each other.
var shared struct {
	once sync.Once
	rt   *wasmhost.Runtime
	err  error
}

func sharedRuntime(t testing.TB) *wasmhost.Runtime {
	t.Helper()
	shared.once.Do(func() {
		shared.rt, shared.err = wasmhost.New(context.Background(), testConfig())
	})
	require.NoError(t, shared.err)
	return shared.rt
}

// tools is a fake Dispatcher with a few tools:
//
//   - echo: succeeds at once (inside Dispatch) with its arguments;
//   - slow: succeeds after {"ms": n} milliseconds, from another goroutine,
//     with {"started": t, "finished": t} (Unix nanoseconds);
//   - fail: fails at once with {"message": m};
//   - failLater: fails after 5 ms, from another goroutine;
//   - hang: never reports.
//
// It records the calls it saw.
type tools struct {
	mu    sync.Mutex
	calls []call
	wg    sync.WaitGroup
}

type call struct {
	Name string
	Args json.RawMessage
}

var toolNames = []string{"echo", "slow", "fail", "failLater", "hang"}

func (d *tools) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	d.mu.Lock()
	d.calls = append(d.calls, call{name, args})
	d.mu.Unlock()
	switch name {
	case "echo":
		done(wasmhost.CallResult{OK: true, Value: args})
	case "slow":
		var a struct{ MS int }
		_ = json.Unmarshal(args, &a)
		d.later(time.Duration(a.MS)*time.Millisecond, func() wasmhost.CallResult {
			return wasmhost.CallResult{OK: true}
		}, done)
	case "fail":
		var a struct{ Message string }
		_ = json.Unmarshal(args, &a)
		done(wasmhost.CallResult{Message: a.Message})
	case "failLater":
		d.later(5*time.Millisecond, func() wasmhost.CallResult {
			return wasmhost.CallResult{Message: "failed later"}
		}, done)
	case "hang":
	default:
		done(wasmhost.CallResult{Message: "unknown tool " + name})
	}
}

// later reports from another goroutine after delay; slow results carry
// their start and finish times.
func (d *tools) later(delay time.Duration, res func() wasmhost.CallResult, done func(wasmhost.CallResult)) {
	d.wg.Add(1)
	started := time.Now()
	go func() {
		defer d.wg.Done()
		time.Sleep(delay)
		r := res()
		if r.OK {
			r.Value, _ = json.Marshal(map[string]int64{"started": started.UnixNano(), "finished": time.Now().UnixNano()})
		}
		done(r)
	}()
}

func (d *tools) seen() []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]call(nil), d.calls...)
}

// runJS runs js with the fake tools bound and returns the outcome and the
// RunError (nil on success). Any other error fails the test.
func runJS(t testing.TB, rt *wasmhost.Runtime, js string, limits api.Limits) (wasmhost.Outcome, *wasmhost.RunError, *tools) {
	t.Helper()
	d := &tools{}
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: toolNames, Limits: limits}, d)
	d.wg.Wait()
	if err == nil {
		return out, nil, d
	}
	var re *wasmhost.RunError
	require.True(t, errors.As(err, &re), "Run failed without a RunError: %v", err)
	return out, re, d
}

// requireHealthy checks that rt still runs a program correctly.
func requireHealthy(t testing.TB, rt *wasmhost.Runtime) {
	t.Helper()
	out, re, _ := runJS(t, rt, `console.log("ok"); return (await tools.echo({n: 41})).n + 1`, api.Limits{})
	require.Nil(t, re)
	require.Equal(t, []string{"ok"}, out.Logs)
	require.JSONEq(t, `42`, string(out.Result))
}
