package api_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestRunCodeLimits_Limits(t *testing.T) {
	tests := []struct {
		name string
		in   api.RunCodeLimits
		want api.Limits
	}{
		{"zero asks for the defaults", api.RunCodeLimits{}, api.Limits{}},
		{"every field in its unit", api.RunCodeLimits{TimeoutMS: 1500, WallMS: 60000, MemoryMB: 64, OutputBytes: 1000, ModelBytes: 2048, MaxCalls: 7},
			api.Limits{ComputeTime: 1500 * time.Millisecond, WallTime: time.Minute, MemoryBytes: 64 << 20, OutputBytes: 1000, ModelBytes: 2048, MaxCalls: 7}},
		{"an overflowing value saturates", api.RunCodeLimits{TimeoutMS: math.MaxInt64, WallMS: math.MaxInt64 / 1000, MemoryMB: math.MaxInt64 >> 19},
			api.Limits{ComputeTime: math.MaxInt64, WallTime: math.MaxInt64, MemoryBytes: math.MaxInt64}},
		{"the largest that converts", api.RunCodeLimits{TimeoutMS: math.MaxInt64 / int64(time.Millisecond)},
			api.Limits{ComputeTime: time.Duration(math.MaxInt64 / int64(time.Millisecond) * int64(time.Millisecond))}},
		{"a negative one stays negative, for Validate to refuse", api.RunCodeLimits{TimeoutMS: math.MinInt64, MemoryMB: -1},
			api.Limits{ComputeTime: math.MinInt64, MemoryBytes: -1 << 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.in.Limits())
		})
	}
	require.Error(t, api.RunCodeLimits{MemoryMB: -1}.Limits().Validate())
	huge := api.RunCodeLimits{TimeoutMS: math.MaxInt64}.Limits().Within(api.DefaultLimits())
	require.Equal(t, api.DefaultComputeTime, huge.ComputeTime, "lowered to the ceiling like any too-high limit")
}

func TestRunCodeLimits_CheckNotNegative(t *testing.T) {
	require.NoError(t, api.RunCodeLimits{}.CheckNotNegative())
	require.NoError(t, api.RunCodeLimits{TimeoutMS: 1, WallMS: 1, MemoryMB: 1, OutputBytes: 1, ModelBytes: 1, MaxCalls: 1}.CheckNotNegative())
	for _, tt := range []struct {
		in   api.RunCodeLimits
		want string
	}{
		{api.RunCodeLimits{TimeoutMS: -1}, "timeout_ms: -1 is negative"},
		{api.RunCodeLimits{WallMS: -2}, "wall_ms: -2 is negative"},
		{api.RunCodeLimits{MemoryMB: -3}, "memory_mb: -3 is negative"},
		{api.RunCodeLimits{OutputBytes: -4}, "output_bytes: -4 is negative"},
		{api.RunCodeLimits{ModelBytes: -5}, "model_bytes: -5 is negative"},
		{api.RunCodeLimits{MaxCalls: -6}, "max_calls: -6 is negative"},
		{api.RunCodeLimits{WallMS: -1, MaxCalls: -1}, "wall_ms: -1 is negative"},
	} {
		require.EqualError(t, tt.in.CheckNotNegative(), tt.want)
	}
}

// The memory limit's bounds, checked by Validate, at, below and above each.
func TestLimits_Validate_memory(t *testing.T) {
	tests := []struct {
		bytes int64
		want  string
	}{
		{0, ""},
		{api.MinMemoryBytes - 1, "memory limit 4194303 is below the minimum of 4194304 bytes (4 MiB)"},
		{api.MinMemoryBytes, ""},
		{api.MinMemoryBytes + 1, ""},
		{api.MaxMemoryBytes - 1, ""},
		{api.MaxMemoryBytes, ""},
		{api.MaxMemoryBytes + 1, "memory limit 4294967297 is above the 4 GiB a 32-bit guest can address"},
	}
	for _, tt := range tests {
		err := api.Limits{MemoryBytes: tt.bytes}.Validate()
		if tt.want == "" {
			require.NoError(t, err, tt.bytes)
		} else {
			require.EqualError(t, err, tt.want)
		}
	}
	require.EqualError(t, api.Limits{MemoryBytes: 1, MaxCalls: -1}.Validate(), "nested call limit -1 is negative", "negative fields first")
}
