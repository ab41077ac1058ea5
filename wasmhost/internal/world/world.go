// Package world is one instance's clock and random source, which the guest
// reads through WASI: the real ones, or a deterministic world's (a seed and
// an epoch), switched per run and kept across a suspension (State).
package world

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"
)

// Spec says which clock and random source a run sees.
type Spec struct {
	Deterministic bool
	Seed          uint64
	Epoch         int64 // where a deterministic wall clock starts, in ns since 1970 (0: DefaultEpoch)
}

// World is one instance's clock and random source. The guest reads them
// through WASI; set switches them, so that an instance made before its run
// (a pooled one) sees the run's. It is used by the instance's goroutine
// only.
type World struct {
	spec       Spec
	wall, mono int64 // deterministic clocks: readings so far, in ns
	rng        *rand.ChaCha8
	// shift is added to the real monotonic clock: a resumed run's
	// (suspend_resume.go), so that performance.now goes on from where it
	// was in the process that suspended it.
	shift int64
}

// New returns spec's world.
func New(spec Spec) *World {
	w := &World{}
	w.Set(spec)
	return w
}

// Set makes w spec's world, starting afresh: a deterministic world's clocks
// start at their origin and its random source at its seed, so every run
// sees the same sequence whatever ran before it.
func (w *World) Set(spec Spec) {
	if spec.Deterministic && spec.Epoch == 0 {
		spec.Epoch = DefaultEpoch
	}
	w.spec, w.wall, w.mono, w.rng, w.shift = spec, 0, 0, nil, 0
	if spec.Deterministic {
		var seed [32]byte
		binary.LittleEndian.PutUint64(seed[:], spec.Seed)
		w.rng = rand.NewChaCha8(seed)
	}
}

// monoBase is the origin of the real monotonic clock.
var monoBase = time.Now()

// Walltime reads the wall clock: seconds and nanoseconds since 1970
// (a deterministic one advances 1 ms per reading).
func (w *World) Walltime() (int64, int32) {
	if !w.spec.Deterministic {
		t := time.Now()
		return t.Unix(), int32(t.Nanosecond())
	}
	t := w.spec.Epoch + w.wall // advancing 1 ms per reading
	w.wall += 1e6
	return t / 1e9, int32(t % 1e9)
}

// Nanotime reads the monotonic clock, in ns (a deterministic one advances
// 1 ms per reading).
func (w *World) Nanotime() int64 {
	if !w.spec.Deterministic {
		return int64(time.Since(monoBase)) + w.shift
	}
	t := w.mono
	w.mono += 1e6
	return t
}

// Read implements io.Reader: the guest's random source.
func (w *World) Read(p []byte) (int, error) {
	if w.rng == nil {
		return crand.Read(p)
	}
	return w.rng.Read(p)
}

// DefaultEpoch is where a deterministic wall clock starts unless its Spec
// says otherwise: 2022-01-01T00:00:00Z, in ns since 1970.
const DefaultEpoch = 1640995200 * int64(time.Second)

// State is what a snapshot keeps of a world (its JSON is part of the
// snapshot format).
type State struct {
	Deterministic bool   `json:"deterministic"`
	Seed          uint64 `json:"seed"`
	Epoch         int64  `json:"epoch"`
	Wall          int64  `json:"wall"`
	Mono          int64  `json:"mono"`
	RNG           []byte `json:"rng,omitempty"`
	Nano          int64  `json:"nano"`  // the guest's monotonic clock at the suspension
	Clock         int64  `json:"clock"` // the host's wall clock then, ns since 1970
}

// Save returns w's state, to be restored in another process.
func (w *World) Save() (State, error) {
	s := State{Deterministic: w.spec.Deterministic, Seed: w.spec.Seed, Epoch: w.spec.Epoch,
		Wall: w.wall, Mono: w.mono, Nano: w.nanotimePeek(), Clock: time.Now().UnixNano()}
	if w.rng != nil {
		b, err := w.rng.MarshalBinary()
		if err != nil {
			return State{}, fmt.Errorf("wasmhost: the run's random source: %w", err)
		}
		s.RNG = b
	}
	return s, nil
}

// nanotimePeek reads the monotonic clock as the guest would, without
// advancing a deterministic one.
func (w *World) nanotimePeek() int64 {
	if w.spec.Deterministic {
		return w.mono
	}
	return int64(time.Since(monoBase)) + w.shift
}

// Restore makes w the world s saved: a deterministic one where it was, a
// real one whose monotonic clock goes on from s's reading plus the wall time
// since.
func (w *World) Restore(s State) error {
	if !s.Deterministic {
		w.Set(Spec{})
		away := max(time.Now().UnixNano()-s.Clock, 0)
		w.shift = s.Nano + away - int64(time.Since(monoBase))
		return nil
	}
	w.Set(Spec{Deterministic: true, Seed: s.Seed, Epoch: s.Epoch})
	w.wall, w.mono = s.Wall, s.Mono
	rng := &rand.ChaCha8{}
	if err := rng.UnmarshalBinary(s.RNG); err != nil {
		return err
	}
	w.rng = rng
	return nil
}
