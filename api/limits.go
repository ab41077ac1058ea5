package api

import (
	"fmt"
	"time"
)

// Limits bound one run. Every limit is enforced by the host. The zero value of
// a field means "the default" (see DefaultLimits).
//
// This file is the one place the limits are declared, defaulted (WithDefaults),
// clamped (Within) and checked (Validate); every other statement of them
// (run_code's schema and arguments, RunCodeLimits, the sandbox's and the
// executor's bounds, docs/security.md's table, the service's config example)
// is derived from it or checked against it by a test.
type Limits struct {
	// ComputeTime is the CPU time spent running guest code, excluding
	// waits on tools and timers and what other runs take meanwhile: the CPU
	// time of the guest's thread in an export that runs over a millisecond,
	// the wall time of a shorter one (an upper bound of its CPU time, which
	// is not worth a system call to read). Where the OS gives no thread
	// clock (outside Linux) it is wall time. Default 30 s.
	ComputeTime time.Duration
	// WallTime is the time from start to settlement, waits included.
	// Default 10 min.
	WallTime time.Duration
	// MemoryBytes caps the guest's linear memory, within [MinMemoryBytes,
	// MaxMemoryBytes]. Default 256 MiB.
	MemoryBytes int64
	// OutputBytes caps logs plus result as the model will see them: the
	// host's hard cap, which protects its memory; past it the run fails
	// (output-limit). Default 4 MiB.
	OutputBytes int
	// ModelBytes is the model budget: the most bytes of run_code's text the
	// model is shown. Past it the run still succeeds and the text is cut
	// structurally (internal/shape); the whole value stays in the result,
	// within OutputBytes. At least MinModelBytes. Default 24 KiB (see
	// RATIONALE.md, "Why is the model budget 24 KiB?").
	ModelBytes int
	// MaxPendingCalls caps nested calls dispatched and not yet resolved.
	// Default 128.
	MaxPendingCalls int
	// MaxCalls caps nested calls over the whole run, those refused for the
	// size of their arguments included. Default 10,000.
	MaxCalls int
	// MaxCallArgBytes caps the JSON arguments of one nested call, checked
	// before the host copies them out of the guest; never more than
	// MaxInFlightArgBytes (the sandbox lowers it to that). Default 4 MiB.
	MaxCallArgBytes int
	// MaxInFlightArgBytes caps the JSON arguments of the nested calls
	// dispatched and not yet resolved, summed: what the host holds for the
	// program at once. Default 32 MiB.
	MaxInFlightArgBytes int
}

// The default limits; docs/security.md lists every bound.
const (
	DefaultComputeTime     = 30 * time.Second
	DefaultWallTime        = 10 * time.Minute
	DefaultMemoryBytes     = 256 << 20
	DefaultOutputBytes     = 4 << 20
	DefaultModelBytes      = 24 << 10
	DefaultMaxPendingCalls = 128
	DefaultMaxCalls        = 10_000
	// DefaultMaxCallArgBytes is far above what a tool needs (a file to
	// write, a batch of records) and far below the guest's memory.
	DefaultMaxCallArgBytes = 4 << 20
	// DefaultMaxInFlightArgBytes lets eight calls of the largest arguments
	// be pending at once; without it, MaxPendingCalls calls of 24 MiB each
	// cost the host gigabytes (issue #9).
	DefaultMaxInFlightArgBytes = 32 << 20
)

// MinModelBytes is the smallest model budget: room for the line that says
// what was cut and a few lines of the output.
const MinModelBytes = 1024

// MinMemoryBytes is the smallest memory limit a run may have: the engine,
// the prelude and a small program need about this much.
const MinMemoryBytes = 4 << 20

// MaxMemoryBytes is the largest memory limit: what a 32-bit guest can
// address.
const MaxMemoryBytes = 4 << 30

// MaxCodeBytes bounds a run_code program, in bytes of UTF-8 (and its code,
// in characters, in run_code's schema): the default and the most a
// deployment may set (executor.Config.WithMaxCodeBytes), and what transpile
// accepts. 512 KiB is about 15,000 lines of ordinary code, far beyond any
// program a model writes for one run_code call, and at this size esbuild's
// own work stays under a quarter of a second of host CPU (it costs about
// 0.5 µs per byte).
const MaxCodeBytes = 512 << 10

// DefaultLimits returns the documented defaults.
func DefaultLimits() Limits {
	return Limits{
		ComputeTime:     DefaultComputeTime,
		WallTime:        DefaultWallTime,
		MemoryBytes:     DefaultMemoryBytes,
		OutputBytes:     DefaultOutputBytes,
		ModelBytes:      DefaultModelBytes,
		MaxPendingCalls: DefaultMaxPendingCalls,
		MaxCalls:        DefaultMaxCalls,

		MaxCallArgBytes:     DefaultMaxCallArgBytes,
		MaxInFlightArgBytes: DefaultMaxInFlightArgBytes,
	}
}

// Validate reports limits no run can work within: a negative field, a model
// budget below MinModelBytes, a memory limit outside [MinMemoryBytes,
// MaxMemoryBytes]. Zero fields are allowed: they mean the default.
func (l Limits) Validate() error {
	switch {
	case l.ComputeTime < 0:
		return fmt.Errorf("compute time limit %v is negative", l.ComputeTime)
	case l.WallTime < 0:
		return fmt.Errorf("wall time limit %v is negative", l.WallTime)
	case l.MemoryBytes < 0:
		return fmt.Errorf("memory limit %d is negative", l.MemoryBytes)
	case l.OutputBytes < 0:
		return fmt.Errorf("output limit %d is negative", l.OutputBytes)
	case l.ModelBytes < 0:
		return fmt.Errorf("model budget %d is negative", l.ModelBytes)
	case l.ModelBytes > 0 && l.ModelBytes < MinModelBytes:
		return fmt.Errorf("model budget %d is below the minimum of %d bytes", l.ModelBytes, MinModelBytes)
	case l.MaxPendingCalls < 0:
		return fmt.Errorf("pending nested call limit %d is negative", l.MaxPendingCalls)
	case l.MaxCalls < 0:
		return fmt.Errorf("nested call limit %d is negative", l.MaxCalls)
	case l.MaxCallArgBytes < 0:
		return fmt.Errorf("nested call argument limit %d is negative", l.MaxCallArgBytes)
	case l.MaxInFlightArgBytes < 0:
		return fmt.Errorf("in-flight nested call argument limit %d is negative", l.MaxInFlightArgBytes)
	case l.MemoryBytes != 0 && l.MemoryBytes < MinMemoryBytes:
		return fmt.Errorf("memory limit %d is below the minimum of %d bytes (%d MiB)", l.MemoryBytes, MinMemoryBytes, MinMemoryBytes>>20)
	case l.MemoryBytes > MaxMemoryBytes:
		return fmt.Errorf("memory limit %d is above the %d GiB a 32-bit guest can address", l.MemoryBytes, MaxMemoryBytes>>30)
	}
	return nil
}

// WithDefaults returns l with every zero field replaced by its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	return l.Within(d).fill(d)
}

// Within returns l lowered to ceiling field by field: a zero field of l takes
// the ceiling's value, a larger one is clamped to it. A zero field of ceiling
// means no ceiling for that field.
func (l Limits) Within(ceiling Limits) Limits {
	return Limits{
		ComputeTime:     lower(l.ComputeTime, ceiling.ComputeTime),
		WallTime:        lower(l.WallTime, ceiling.WallTime),
		MemoryBytes:     lower(l.MemoryBytes, ceiling.MemoryBytes),
		OutputBytes:     lower(l.OutputBytes, ceiling.OutputBytes),
		ModelBytes:      lower(l.ModelBytes, ceiling.ModelBytes),
		MaxPendingCalls: lower(l.MaxPendingCalls, ceiling.MaxPendingCalls),
		MaxCalls:        lower(l.MaxCalls, ceiling.MaxCalls),

		MaxCallArgBytes:     lower(l.MaxCallArgBytes, ceiling.MaxCallArgBytes),
		MaxInFlightArgBytes: lower(l.MaxInFlightArgBytes, ceiling.MaxInFlightArgBytes),
	}
}

func (l Limits) fill(d Limits) Limits {
	return Limits{
		ComputeTime:     orDefault(l.ComputeTime, d.ComputeTime),
		WallTime:        orDefault(l.WallTime, d.WallTime),
		MemoryBytes:     orDefault(l.MemoryBytes, d.MemoryBytes),
		OutputBytes:     orDefault(l.OutputBytes, d.OutputBytes),
		ModelBytes:      orDefault(l.ModelBytes, d.ModelBytes),
		MaxPendingCalls: orDefault(l.MaxPendingCalls, d.MaxPendingCalls),
		MaxCalls:        orDefault(l.MaxCalls, d.MaxCalls),

		MaxCallArgBytes:     orDefault(l.MaxCallArgBytes, d.MaxCallArgBytes),
		MaxInFlightArgBytes: orDefault(l.MaxInFlightArgBytes, d.MaxInFlightArgBytes),
	}
}

type number interface {
	~int | ~int64
}

func lower[T number](v, ceiling T) T {
	switch {
	case v == 0:
		return ceiling
	case ceiling == 0:
		return v
	case v > ceiling:
		return ceiling
	}
	return v
}

func orDefault[T number](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}
