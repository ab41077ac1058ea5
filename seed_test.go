package ptcx_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
)

const seedWorldTS = `return {r: Math.random(), d: new Date().toISOString()}`

func TestHost_Execute_seed(t *testing.T) {
	seeded := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithSeed(5))
	plain := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC))
	run := func(h *ptcx.Host, seed *uint64) string {
		c := runCode("", seedWorldTS)
		c.Seed = seed
		r := h.Execute(context.Background(), c)
		require.True(t, r.OK(), r.Text)
		return r.Text
	}
	five, six := uint64(5), uint64(6)
	host := run(seeded, nil)
	tests := []struct {
		name string
		got  string
		same bool
	}{
		{"WithSeed repeats", run(seeded, nil), true},
		{"Call.Seed equal to WithSeed", run(plain, &five), true},
		{"Call.Seed overrides WithSeed", run(seeded, &six), false},
		{"no seed is the real world", run(plain, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.same {
				require.Equal(t, host, tt.got)
			} else {
				require.NotEqual(t, host, tt.got)
			}
		})
	}
	require.Contains(t, host, "2022-01-01T00:00:00")
}
