package wasmhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"

	"github.com/ptcx/ptcx/wasmhost"
)

// sloppy is a buggy Dispatcher: it reports every outcome twice, from two
// goroutines, and keeps the done functions so they can be called again after
// the run ended.
type sloppy struct {
	mu    sync.Mutex
	dones []func(wasmhost.CallResult)
}

func (s *sloppy) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	s.mu.Lock()
	s.dones = append(s.dones, done)
	s.mu.Unlock()
	for range 2 {
		go func() {
			time.Sleep(time.Millisecond)
			done(wasmhost.CallResult{OK: true, Value: args})
		}()
	}
}

func (s *sloppy) callAgain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, done := range s.dones {
		done(wasmhost.CallResult{Message: "after the run"})
	}
}

func TestDispatcher_doneAfterRunReturned(t *testing.T) {
	d := &sloppy{}
	out, err := sharedRuntime(t).Run(context.Background(), wasmhost.Program{
		JS:    `const a = await tools.echo({n: 1}); tools.echo({late: true}); return a`,
		Tools: []string{"echo"},
	}, d)
	require.NoError(t, err)
	require.JSONEq(t, `{"n":1}`, string(out.Result))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(d.callAgain)
	}
	wg.Wait()
}

// hammerPrograms mix programs that succeed and programs that fail.
var hammerPrograms = []struct {
	js     string
	limits api.Limits
	kind   api.Kind // "" for success
}{
	{js: `return (await tools.echo({n: 1})).n`},
	{js: `const r = await Promise.all([tools.slow({ms: 5}), tools.echo({}), tools.slow({ms: 1})]); return r.length`},
	{js: `console.log("hi"); await new Promise((r) => setTimeout(r, 2)); return "done"`},
	{js: `try { await tools.failLater() } catch (e) { return e.toolName }`},
	{js: `throw new Error("boom")`, kind: api.KindException},
	{js: `const x = ;`, kind: api.KindSyntax},
	{js: `for (;;) {}`, limits: api.Limits{ComputeTime: 50 * time.Millisecond}, kind: api.KindTimeout},
	{js: `await new Promise(() => {})`, kind: api.KindException},
	{js: `return [1n]`, kind: api.KindInvalidOutput},
	{js: `const a = []; for (;;) a.push(new Uint8Array(1 << 20))`, limits: api.Limits{MemoryBytes: 8 << 20}, kind: api.KindMemory},
	{js: `for (;;) console.log("flood")`, limits: api.Limits{OutputBytes: 64}, kind: api.KindOutputLimit},
	{js: `await tools.hang()`, limits: api.Limits{WallTime: 20 * time.Millisecond}, kind: api.KindTimeout},
}

func TestRuntime_Run_hammer(t *testing.T) {
	// Every run admitted at once, whatever the machine's memory: the
	// programs' own limits are what this hammers (admission_test.go
	// hammers the caps).
	hammer(t, testConfig().WithMaxRuns(hammerRuns).WithMaxCommittedMemory(hammerRuns*api.DefaultMemoryBytes))
}

const hammerRuns = 200

func hammer(t *testing.T, cfg wasmhost.Config) {
	before := runtime.NumGoroutine()
	rt, err := wasmhost.New(context.Background(), cfg)
	require.NoError(t, err)
	const runs = hammerRuns
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			p := hammerPrograms[i%len(hammerPrograms)]
			d := &tools{}
			out, err := rt.Run(context.Background(), wasmhost.Program{JS: p.js, Tools: toolNames, Limits: p.limits}, d)
			d.wg.Wait()
			var re *wasmhost.RunError
			switch {
			case p.kind == "" && err != nil:
				errs <- fmt.Errorf("run %d (%s): %w", i, p.js, err)
			case p.kind == "" && out.Result == nil:
				errs <- fmt.Errorf("run %d (%s): no result", i, p.js)
			case p.kind != "" && !errors.As(err, &re):
				errs <- fmt.Errorf("run %d (%s): want %s, got %v", i, p.js, p.kind, err)
			case p.kind != "" && re.Kind != p.kind:
				errs <- fmt.Errorf("run %d (%s): want %s, got %s: %s", i, p.js, p.kind, re.Kind, re.Message)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	requireHealthy(t, rt)
	require.NoError(t, rt.Close(context.Background()))
	requireNoGoroutineLeak(t, before)
}

// requireNoGoroutineLeak waits for the goroutines started since before to
// end (wazero's per-call watchers and the fake tools' timers end
// asynchronously) and fails if some are still there after a few seconds.
func requireNoGoroutineLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		now := runtime.NumGoroutine()
		if now <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, now, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
