package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestExecutor_Execute_world(t *testing.T) {
	seven, nine := wasmhost.World{Seed: 7}, wasmhost.World{Seed: 9}
	tests := []struct {
		name   string
		config *wasmhost.World
		call   *wasmhost.World
		want   *wasmhost.World
	}{
		{"none", nil, nil, nil},
		{"the call's", nil, &seven, &seven},
		{"the config's", &nine, nil, &nine},
		{"the call's over the config's", &nine, &seven, &seven},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *wasmhost.World
			var notes []executor.Notification
			var startWorld *wasmhost.World
			rt := fakeRuntime(func(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				got = p.World
				<-submit(d, "read", `{}`)
				return wasmhost.Outcome{Stats: wasmhost.Stats{Calls: 1, Memory: 1 << 20}}, nil
			})
			cfg := executor.NewConfig().WithRuntime(rt).
				WithOnStart(func(s executor.Start) {
					if s.Tool == registry.RunCode {
						startWorld = s.World
					}
				}).
				WithOnResult(func(n executor.Notification) { notes = append(notes, n) })
			if tt.config != nil {
				cfg = cfg.WithWorld(*tt.config)
			}
			e := newExecutor(t, newFixture(t, api.ModePTC).reg, cfg)
			r := e.Execute(context.Background(), executor.Call{ID: "w", Name: registry.RunCode, Args: runCode("x"), World: tt.call})
			require.True(t, r.OK(), r.Text)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.want, startWorld, "the hooks see the world")
			require.Len(t, notes, 2)
			nested, outer := notes[0], notes[1]
			require.Nil(t, nested.Run, "a nested call has no run")
			require.Nil(t, nested.World, "a nested call has no world")
			require.NotNil(t, outer.Run)
			require.Equal(t, tt.want, outer.Run.World)
			require.Equal(t, []string{"read", "write"}, outer.Run.Tools)
			require.Equal(t, 1, outer.Run.Stats.Calls)
			require.Equal(t, api.DefaultLimits().MemoryBytes, outer.Run.Limits.MemoryBytes)
		})
	}
}

// A run_code call refused before its program ran carries no run.
func TestExecutor_Execute_noRunWhenRefused(t *testing.T) {
	var notes []executor.Notification
	cfg := executor.NewConfig().WithRuntime(fakeRuntime(func(context.Context, wasmhost.Program, wasmhost.Dispatcher) (wasmhost.Outcome, error) {
		t.Error("the program ran")
		return wasmhost.Outcome{}, nil
	})).WithOnResult(func(n executor.Notification) { notes = append(notes, n) })
	e := newExecutor(t, newFixture(t, api.ModePTC).reg, cfg)
	r := e.Execute(context.Background(), executor.Call{Name: registry.RunCode, Args: runCode("return (")})
	require.False(t, r.OK())
	require.Len(t, notes, 1)
	require.Nil(t, notes[0].Run)
}
