package api_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestLimits_Within(t *testing.T) {
	ceiling := api.Limits{ComputeTime: time.Second, MaxCalls: 10}
	tests := []struct {
		name string
		in   api.Limits
		want api.Limits
	}{
		{"zero takes the ceiling", api.Limits{}, ceiling},
		{"below the ceiling stays", api.Limits{ComputeTime: time.Millisecond, MaxCalls: 9}, api.Limits{ComputeTime: time.Millisecond, MaxCalls: 9}},
		{"at the ceiling stays", ceiling, ceiling},
		{"past the ceiling is lowered", api.Limits{ComputeTime: time.Hour, MaxCalls: 11}, ceiling},
		{"no ceiling keeps the value", api.Limits{OutputBytes: 5}, api.Limits{ComputeTime: time.Second, MaxCalls: 10, OutputBytes: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.in.Within(ceiling))
		})
	}
}

func TestLimits_WithDefaults(t *testing.T) {
	require.Equal(t, api.DefaultLimits(), api.Limits{}.WithDefaults())
	l := api.Limits{MaxCalls: 3, MemoryBytes: api.DefaultMemoryBytes * 2}.WithDefaults()
	require.Equal(t, 3, l.MaxCalls)
	require.Equal(t, int64(api.DefaultMemoryBytes), l.MemoryBytes, "a default is also a ceiling")
}

func TestLimits_Validate(t *testing.T) {
	require.NoError(t, api.Limits{}.Validate())
	require.NoError(t, api.DefaultLimits().Validate())
	require.EqualError(t, api.Limits{MaxCalls: -1}.Validate(), "nested call limit -1 is negative")
	require.EqualError(t, api.Limits{WallTime: -time.Second}.Validate(), "wall time limit -1s is negative")
	require.NoError(t, api.Limits{ModelBytes: api.MinModelBytes}.Validate())
	require.EqualError(t, api.Limits{ModelBytes: api.MinModelBytes - 1}.Validate(), "model budget 1023 is below the minimum of 1024 bytes")
	require.EqualError(t, api.Limits{ModelBytes: -1}.Validate(), "model budget -1 is negative")
}
