package api

import (
	"fmt"
	"math"
	"time"
)

// RunCodeLimits are the limits a caller may ask of one run, spelled as
// run_code's arguments spell them ({"limits": {"timeout_ms": …}}), and as
// ptcx serve's requests and tenant config take them: the one type of that
// spelling. A zero field asks for the deployment's limit; a higher one is
// lowered to it (Limits.Within); Limits.Validate refuses one below a
// limit's minimum.
type RunCodeLimits struct {
	// TimeoutMS is Limits.ComputeTime, in milliseconds.
	TimeoutMS int64 `json:"timeout_ms,omitempty" yaml:"timeout_ms,omitempty"`
	// WallMS is Limits.WallTime, in milliseconds.
	WallMS int64 `json:"wall_ms,omitempty" yaml:"wall_ms,omitempty"`
	// MemoryMB is Limits.MemoryBytes, in MiB.
	MemoryMB int64 `json:"memory_mb,omitempty" yaml:"memory_mb,omitempty"`
	// OutputBytes is Limits.OutputBytes.
	OutputBytes int `json:"output_bytes,omitempty" yaml:"output_bytes,omitempty"`
	// ModelBytes is Limits.ModelBytes, the model budget.
	ModelBytes int `json:"model_bytes,omitempty" yaml:"model_bytes,omitempty"`
	// MaxCalls is Limits.MaxCalls.
	MaxCalls int `json:"max_calls,omitempty" yaml:"max_calls,omitempty"`
}

// Limits converts l, saturating: a value whose conversion would overflow
// is the largest (or smallest) the field holds, so that an absurdly high
// limit is lowered to the deployment's like any other too-high one.
func (l RunCodeLimits) Limits() Limits {
	return Limits{
		ComputeTime: time.Duration(scaled(l.TimeoutMS, int64(time.Millisecond))),
		WallTime:    time.Duration(scaled(l.WallMS, int64(time.Millisecond))),
		MemoryBytes: scaled(l.MemoryMB, 1<<20),
		OutputBytes: l.OutputBytes,
		ModelBytes:  l.ModelBytes,
		MaxCalls:    l.MaxCalls,
	}
}

// CheckNotNegative reports the first negative field, by its JSON name
// ("timeout_ms: -1 is negative"): zero asks for the deployment's limit, and
// a negative one is a mistake. Minimums are Limits.Validate's and run_code's
// schema's.
func (l RunCodeLimits) CheckNotNegative() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"timeout_ms", l.TimeoutMS}, {"wall_ms", l.WallMS}, {"memory_mb", l.MemoryMB},
		{"output_bytes", int64(l.OutputBytes)}, {"model_bytes", int64(l.ModelBytes)}, {"max_calls", int64(l.MaxCalls)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s: %d is negative", f.name, f.v)
		}
	}
	return nil
}

// scaled is v*unit, saturating instead of overflowing.
func scaled(v, unit int64) int64 {
	switch {
	case v > math.MaxInt64/unit:
		return math.MaxInt64
	case v < math.MinInt64/unit:
		return math.MinInt64
	}
	return v * unit
}
