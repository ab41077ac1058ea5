package wasmhost

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// TestRuntime_newInstance_restored checks both ways a memory starts with
// the image: mapped copy-on-write (Linux) and copied (elsewhere, or forced
// here): the instance sees the image, its writes stay its own, and it runs
// programs.
func TestRuntime_newInstance_restored(t *testing.T) {
	tests := []struct {
		name     string
		copyOnly bool
		wantCoW  bool
	}{
		{"mapped", false, runtime.GOOS == "linux"},
		{"copied", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := NewConfig().WithPool(0)
			cfg.copyRestore = tt.copyOnly
			rt, err := New(ctx, cfg)
			require.NoError(t, err)
			defer rt.Close(ctx)
			// wazero maps the image's memfd; wasmtime, the image held in
			// the restore module's data (engine_wasmtime.go).
			require.Equal(t, tt.wantCoW, rt.image.fd >= 0 || rt.image.inModule)

			a, err := rt.newInstance(ctx, rt.limits.MemoryBytes, world.Spec{}, "")
			require.NoError(t, err)
			defer a.close(ctx)
			b, err := rt.newInstance(ctx, rt.limits.MemoryBytes, world.Spec{}, "")
			require.NoError(t, err)
			defer b.close(ctx)
			require.Equal(t, tt.wantCoW, a.memory.cow)
			require.Equal(t, uint32(len(rt.image.memory)), a.mem.Size())

			// The first page is the stack's bottom, which nothing used:
			// what a writes there, b and the image do not see.
			const at = 64
			before := rt.image.memory[at]
			require.True(t, a.mem.Write(at, []byte{before + 1}))
			got, ok := b.mem.Read(at, 1)
			require.True(t, ok)
			require.Equal(t, before, got[0])
			require.Equal(t, before, rt.image.memory[at])
		})
	}
}

// TestRuntime_Run_copiedRestore: instances whose memory is a copy of the
// image serve runs, and are recycled, reset block by block, never cooled
// (reverting a copy's pages would zero them): hot, and with the pool
// keeping none hot, which makes it try to cool every one.
func TestRuntime_Run_copiedRestore(t *testing.T) {
	ctx := context.Background()
	for _, hot := range []int{2, 0} {
		cfg := NewConfig()
		cfg.copyRestore = true
		rt, err := New(ctx, cfg)
		require.NoError(t, err)
		defer rt.Close(ctx)
		SetPoolHot(rt, hot)
		echo := DispatcherFunc(func(_ string, args json.RawMessage, done func(CallResult)) {
			done(CallResult{OK: true, Value: args})
		})
		for range 3 {
			out, err := rt.Run(ctx, Program{JS: `globalThis.x = (globalThis.x ?? 0) + 1; return (await tools.echo({n: x})).n`,
				Tools: []string{"echo"}}, echo)
			require.NoError(t, err)
			require.JSONEq(t, `1`, string(out.Result))
		}
		s := rt.PoolStats()
		require.Positive(t, s.Recycled, "hot %d: %+v", hot, s)
		require.Zero(t, s.Cooled, "hot %d: %+v", hot, s)
	}
}

// TestWorld_set_deterministic checks a world restarts its clocks and random
// source when set again, and that the real one differs.
func TestWorld_set_deterministic(t *testing.T) {
	w := world.New(world.Spec{Deterministic: true, Seed: 7})
	s1, ns1 := w.Walltime()
	m1 := w.Nanotime()
	r1 := make([]byte, 16)
	_, _ = w.Read(r1)
	s2, _ := w.Walltime()
	w.Set(world.Spec{Deterministic: true, Seed: 7})
	s3, ns3 := w.Walltime()
	m3 := w.Nanotime()
	r3 := make([]byte, 16)
	_, _ = w.Read(r3)
	require.Equal(t, int64(1640995200), s1)
	require.Equal(t, []any{s1, ns1, m1, r1}, []any{s3, ns3, m3, r3})
	require.Equal(t, s1, s2) // 1 ms later
	w.Set(world.Spec{Deterministic: true, Seed: 8})
	r4 := make([]byte, 16)
	_, _ = w.Read(r4)
	require.NotEqual(t, r1, r4)
	w.Set(world.Spec{})
	s5, _ := w.Walltime()
	require.Greater(t, s5, s1)
}
