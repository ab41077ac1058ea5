package wasmhost_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost"
)

// worldTimersJS reads the world and orders timers of different delays.
const worldTimersJS = `const order = [];
await Promise.all([30, 10, 20, 10].map((ms, i) => new Promise(r => setTimeout(() => { order.push(i); r(); }, ms))));
return {random: [Math.random(), Math.random()], now: Date.now(), perf: performance.now(), date: new Date().toISOString(), order}`

func runWorld(t *testing.T, rt *wasmhost.Runtime, w *wasmhost.World) string {
	t.Helper()
	out, err := rt.Run(context.Background(), wasmhost.Program{JS: worldTimersJS, Tools: toolNames, World: w}, &tools{})
	require.NoError(t, err)
	return string(out.Result)
}

func TestRuntime_Run_worldPerProgram(t *testing.T) {
	rt := sharedRuntime(t)
	seven := runWorld(t, rt, &wasmhost.World{Seed: 7})
	tests := []struct {
		name  string
		world *wasmhost.World
		same  bool
	}{
		{"same seed", &wasmhost.World{Seed: 7}, true},
		{"same seed, default start spelled out", &wasmhost.World{Seed: 7, Start: wasmhost.DefaultEpoch()}, true},
		{"another seed", &wasmhost.World{Seed: 8}, false},
		{"another start", &wasmhost.World{Seed: 7, Start: time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"no world (the real one)", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorld(t, rt, tt.world)
			if tt.same {
				require.Equal(t, seven, got)
			} else {
				require.NotEqual(t, seven, got)
			}
		})
	}
	require.Contains(t, seven, `"date":"2022-01-01T00:00:00`)
	require.Contains(t, seven, `"order":[1,3,2,0]`)
	require.Contains(t, runWorld(t, rt, &wasmhost.World{Seed: 7, Start: time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)}), `"date":"2030-05-01T00:00:00`)
}

// A run's own world overrides the Runtime's deterministic one, and does not
// depend on the runs around it.
func TestRuntime_Run_worldOverridesConfigUnderLoad(t *testing.T) {
	rt := newRuntime(t, testConfig().WithDeterministic(1))
	want := runWorld(t, rt, &wasmhost.World{Seed: 99})
	require.NotEqual(t, runWorld(t, rt, nil), want, "the Config's seed and the run's give one world")
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := rt.Run(context.Background(), wasmhost.Program{JS: worldTimersJS, Tools: toolNames, World: &wasmhost.World{Seed: 99}}, &tools{})
			if err == nil {
				got[i] = string(out.Result)
			}
		}()
	}
	wg.Wait()
	for i := range got {
		require.Equal(t, want, got[i], "run %d", i)
	}
}

// In a deterministic world, timers fire in the order of their virtual
// deadlines, whatever the guest computed between setting them; in the real
// one, in the order of their real deadlines.
func TestRuntime_Run_worldTimersIgnoreCompute(t *testing.T) {
	const js = `const o = [];
const a = new Promise(r => setTimeout(() => { o.push("a"); r(); }, 10));
const t0 = Date.now(); while (Date.now() - t0 < 40) {}
const b = new Promise(r => setTimeout(() => { o.push("b"); r(); }, 5));
await Promise.all([a, b]); return o`
	rt := sharedRuntime(t)
	tests := []struct {
		name  string
		world *wasmhost.World
		want  string
	}{
		{"deterministic world", &wasmhost.World{Seed: 1}, `["b","a"]`},
		{"real world", nil, `["a","b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := rt.Run(context.Background(), wasmhost.Program{JS: js, Tools: toolNames, World: tt.world}, &tools{})
			require.NoError(t, err)
			require.Equal(t, tt.want, string(out.Result))
		})
	}
}
