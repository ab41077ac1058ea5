package wasmhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// TestRuntime_Run_recycles: an instance whose run settled by itself
// without growing its memory joins the pool again; any other is closed.
func TestRuntime_Run_recycles(t *testing.T) {
	rt := newRuntime(t, testConfig())
	requireHealthy(t, rt)
	recycles := recycledPerRun(t, rt) > 0
	tests := []struct {
		name     string
		js       string
		limits   api.Limits
		suspend  bool
		recycled bool
	}{
		{"a result", `return 1`, api.Limits{}, false, true},
		{"a thrown error", `throw new Error("no")`, api.Limits{}, false, true},
		{"a nested call", `return (await tools.echo({n: 1})).n`, api.Limits{}, false, true},
		{"memory grown", `globalThis.big = new Array(300000).fill(0).map((_, i) => "s" + i); return 0`, api.Limits{}, false, false},
		{"stopped at its compute limit", `for (;;) {}`, api.Limits{ComputeTime: 50 * time.Millisecond}, false, false},
		{"suspended", `return (await tools.echo({n: 1})).n`, api.Limits{}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rt.PoolStats().Recycled
			p := wasmhost.Program{JS: tt.js, Tools: toolNames, Limits: tt.limits}
			if tt.suspend {
				p.Suspend = func(wasmhost.Quiescence) bool { return true }
			}
			out, err := rt.Run(context.Background(), p, &tools{})
			if tt.suspend {
				require.NoError(t, err)
				require.NotNil(t, out.Suspended)
			}
			got := rt.PoolStats().Recycled - before
			if tt.recycled && recycles {
				require.Equal(t, int64(1), got, "recycled before Run returned (%v)", err)
			} else {
				require.Zero(t, got, "not recycled (%v)", err)
			}
			requireHealthy(t, rt) // on a recycled instance, when there is one
		})
	}
}

// TestRuntime_Run_recycledIsNew: a run on a recycled instance sees what a
// run on a new one does, for a program that changes everything it can
// without growing its memory (the isolation property test has more).
func TestRuntime_Run_recycledIsNew(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(1))
	const probe = `return [typeof globalThis.leak, Object.keys(Object.prototype).length, typeof Math.random(), performance.now() < 60000]`
	first, re, _ := runJS(t, rt, probe, api.Limits{})
	require.Nil(t, re)
	for range 20 {
		_, re, _ := runJS(t, rt, `globalThis.leak = 1; Object.prototype.x = 2; Math.random = () => 0; return 0`, api.Limits{})
		require.Nil(t, re)
		got, re, _ := runJS(t, rt, probe, api.Limits{})
		require.Nil(t, re)
		require.JSONEq(t, string(first.Result), string(got.Result))
	}
	s := rt.PoolStats()
	require.GreaterOrEqual(t, s.Recycled, 40*recycledPerRun(t, rt), "every run was recycled: %+v", s)
	require.LessOrEqual(t, s.Idle, 2*s.Size)
	var v []any
	require.NoError(t, json.Unmarshal(first.Result, &v))
	require.Equal(t, []any{"undefined", 0.0, "number", true}, v)
}

// recycledPerRun is how many instances a settled run gives back to the
// pool: one, on every engine (Recycles). Any other engine fails the test
// until it says.
func recycledPerRun(t *testing.T, rt *wasmhost.Runtime) int64 {
	t.Helper()
	switch e := engineUnderTest(); e {
	case wasmhost.EngineWazero, wasmhost.EngineWasmtime:
		require.True(t, wasmhost.Recycles(rt), "%s recycles the instances of settled runs", e)
		return 1
	default:
		t.Fatalf("engine %q: say whether it recycles", e)
		return 0
	}
}

// TestSession_letGo_recycles: a session's instance joins the pool again
// when the session lets it go (closed, reset, suspended to bytes), reset
// to the image, so that the runs beside sessions take a hot instance, not
// a new one; not when its memory grew, nor when runs of two tenants used
// it, nor when the host stopped its program.
func TestSession_letGo_recycles(t *testing.T) {
	rt := newRuntime(t, testConfig())
	requireHealthy(t, rt)
	recycles := recycledPerRun(t, rt) > 0
	ctx := context.Background()
	tests := []struct {
		name     string
		runs     []wasmhost.Program
		letGo    func(*wasmhost.Session)
		recycled bool
	}{
		{"closed", []wasmhost.Program{{JS: `globalThis.leak = 1; const kept = 2; return 0`}, {JS: `return kept`}},
			func(s *wasmhost.Session) { s.Close(ctx) }, true},
		{"reset", []wasmhost.Program{{JS: `const kept = 2; return 0`}}, func(s *wasmhost.Session) { s.Reset(ctx) }, true},
		{"suspended", []wasmhost.Program{{JS: `const kept = 2; return 0`}}, func(s *wasmhost.Session) {
			_, err := s.Suspend(ctx)
			require.NoError(t, err)
		}, true},
		{"a thrown error kept", []wasmhost.Program{{JS: `const kept = 2; throw new Error("no")`}},
			func(s *wasmhost.Session) { s.Close(ctx) }, true},
		{"memory grown", []wasmhost.Program{{JS: `globalThis.big = new Array(300000).fill(0).map((_, i) => "s" + i); return 0`}},
			func(s *wasmhost.Session) { s.Close(ctx) }, false},
		{"two tenants", []wasmhost.Program{{JS: `const kept = 2; return 0`, Tenant: "a"}, {JS: `return kept`, Tenant: "b"}},
			func(s *wasmhost.Session) { s.Close(ctx) }, false},
		{"stopped at its compute limit", []wasmhost.Program{{JS: `for (;;) {}`, Limits: api.Limits{ComputeTime: 50 * time.Millisecond}}},
			func(s *wasmhost.Session) { s.Close(ctx) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := rt.NewSession(ctx)
			require.NoError(t, err)
			before := rt.PoolStats().Recycled
			for _, p := range tt.runs {
				p.Tools, p.Session = toolNames, s
				_, _ = rt.Run(ctx, p, &tools{})
			}
			require.Zero(t, rt.PoolStats().Recycled-before, "a session's instance is its own while the session holds it")
			tt.letGo(s)
			got := rt.PoolStats().Recycled - before
			if tt.recycled && recycles {
				require.Equal(t, int64(1), got)
			} else {
				require.Zero(t, got)
			}
			// The next plain run takes it, and sees nothing of the session.
			out, re, _ := runJS(t, rt, `return [typeof globalThis.leak, typeof kept, typeof big]`, api.Limits{})
			require.Nil(t, re)
			require.JSONEq(t, `["undefined","undefined","undefined"]`, string(out.Result))
			requireHealthy(t, rt)
		})
	}
}

// TestSession_letGo_recycledIsNew: a plain run on the instance of a
// closed session sees what a run on a new instance does, however the
// session changed its context, for many sessions in a row.
func TestSession_letGo_recycledIsNew(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(1))
	ctx := context.Background()
	const probe = `return [typeof globalThis.leak, typeof kept, Object.keys(Object.prototype).length, typeof Math.random(), typeof tools.echo]`
	first, re, _ := runJS(t, rt, probe, api.Limits{})
	require.Nil(t, re)
	before := rt.PoolStats().Recycled
	for range 20 {
		s, err := rt.NewSession(ctx)
		require.NoError(t, err)
		for _, js := range []string{`globalThis.leak = 1; Object.prototype.x = 2; Math.random = () => 0; const kept = 1; return 0`,
			`let more = kept + 1; return more`} {
			_, err := rt.Run(ctx, wasmhost.Program{JS: js, Tools: toolNames, Session: s}, &tools{})
			require.NoError(t, err)
		}
		s.Close(ctx)
		got, re, _ := runJS(t, rt, probe, api.Limits{})
		require.Nil(t, re)
		require.JSONEq(t, string(first.Result), string(got.Result))
	}
	require.GreaterOrEqual(t, rt.PoolStats().Recycled-before, 40*recycledPerRun(t, rt), "every session and every run was recycled")
}

// TestSession_letGo_hammer: sessions closing and suspending while plain
// runs take instances from the pool: no plain run sees a session's state,
// and every session sees only its own.
func TestSession_letGo_hammer(t *testing.T) {
	rt := newRuntime(t, testConfig().WithPool(2))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				s, err := rt.NewSession(ctx)
				if err != nil {
					errs <- err
					return
				}
				mark := strconv.Itoa(g*100 + i)
				for _, js := range []string{`globalThis.leak = ` + mark + `; const kept = ` + mark + `; return 0`, `return [leak, kept]`} {
					out, err := rt.Run(ctx, wasmhost.Program{JS: js, Tools: toolNames, Session: s}, &tools{})
					if err != nil {
						errs <- err
						return
					}
					if js[0] == 'r' && string(out.Result) != "["+mark+","+mark+"]" {
						errs <- fmt.Errorf("session %s read %s", mark, out.Result)
					}
				}
				if i%3 == 0 {
					if _, err := s.Suspend(ctx); err != nil {
						errs <- err
					}
				}
				s.Close(ctx)
				out, err := rt.Run(ctx, wasmhost.Program{JS: `return [typeof globalThis.leak, typeof kept]`, Tools: toolNames}, &tools{})
				if err != nil {
					errs <- err
					return
				}
				if string(out.Result) != `["undefined","undefined"]` {
					errs <- fmt.Errorf("a plain run after session %s read %s", mark, out.Result)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestSession_letGo_whileRuntimeCloses: sessions let their instances go
// (reset to the image, written page by page) while the Runtime closes,
// which frees the memories of the instances no guest is counted in: no
// fault, no race, and the sessions' instances are closed, not recycled,
// once the Runtime is.
func TestSession_letGo_whileRuntimeCloses(t *testing.T) {
	ctx := context.Background()
	for round := range 6 {
		rt, err := wasmhost.New(ctx, testConfig().WithPool(2))
		require.NoError(t, err)
		var sessions []*wasmhost.Session
		for i := range 8 {
			s, err := rt.NewSession(ctx)
			require.NoError(t, err)
			_, err = rt.Run(ctx, wasmhost.Program{JS: `const kept = new Array(5000).fill(` + strconv.Itoa(i) + `); return 0`, Tools: toolNames, Session: s}, &tools{})
			require.NoError(t, err)
			sessions = append(sessions, s)
		}
		var wg sync.WaitGroup
		for _, s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Close(ctx)
			}()
		}
		if round%2 == 0 {
			runtime.Gosched()
		}
		require.NoError(t, rt.Close(ctx))
		wg.Wait()
		_, err = rt.Run(ctx, wasmhost.Program{JS: `return 1`, Tools: toolNames}, &tools{})
		require.ErrorIs(t, err, wasmhost.ErrClosed)
	}
}
