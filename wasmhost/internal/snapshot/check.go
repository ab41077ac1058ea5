package snapshot

import (
	"math/rand/v2"
	"unicode/utf8"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// check refuses a table no suspended run could have had: every count,
// id, size and name is checked, so that a resumed run starts within its
// limits and the guest is fed only what it could have asked for.
func (m *Meta) Check(img *Base, memSize int64) error {
	l := m.Limits
	if err := l.Validate(); err != nil {
		return Refuse("its limits are invalid: %v", err)
	}
	if l != l.WithDefaults() {
		return Refuse("its limits are not complete")
	}
	switch {
	case m.Compute < 0 || m.Wall < 0:
		return Refuse("its compute time %d or wall time %d is negative", m.Compute, m.Wall)
	case m.Calls < 0 || m.RefusedCalls < 0 || m.Calls+m.RefusedCalls > l.MaxCalls:
		return Refuse("its %d calls and %d refused ones are out of range (at most %d)", m.Calls, m.RefusedCalls, l.MaxCalls)
	case m.LastID < 0 || int64(m.LastID) != int64(m.Calls)+int64(m.RefusedCalls):
		return Refuse("its last call id %d does not match its %d calls", m.LastID, m.Calls+m.RefusedCalls)
	case len(m.Pending) == 0 && len(m.Timers.Entries) == 0:
		return Refuse("it waits on no call and no timer, so it could never go on")
	case len(m.Pending) > l.MaxPendingCalls:
		return Refuse("it has %d calls pending, over its limit of %d", len(m.Pending), l.MaxPendingCalls)
	case int64(m.BufPtr)+int64(m.BufCap) > memSize:
		return Refuse("its exchange buffer [%d, +%d) is outside its memory", m.BufPtr, m.BufCap)
	}
	tools := make(map[string]bool, len(m.Tools))
	for _, name := range m.Tools {
		if !utf8.ValidString(name) || len(name) > abi.MaxNameBytes {
			return Refuse("a tool name is not valid UTF-8 or is too long")
		}
		tools[name] = true
	}
	if err := m.checkOutput(); err != nil {
		return err
	}
	seen := make(map[int32]bool, len(m.Pending))
	args := 0
	for _, c := range m.Pending {
		switch {
		case c.ID <= 0 || c.ID > m.LastID || seen[c.ID]:
			return Refuse("its pending call id %d is out of range or repeated", c.ID)
		case c.Size < 0 || c.Size > l.MaxCallArgBytes || (c.Name != "" && c.Size != len(c.Args)):
			return Refuse("its pending call %d's arguments are out of range", c.ID)
		case c.Name == "" && !c.Answered:
			return Refuse("its pending call %d has no tool and no answer", c.ID)
		case c.Name != "" && !tools[c.Name] && c.Name != abi.HandleCall:
			return Refuse("its pending call %d names a tool the program is not bound to", c.ID)
		case !c.Answered && (c.OK || c.Value != nil || c.Message != "" || c.Code != "" || c.Handle):
			return Refuse("its pending call %d has an answer but is not answered", c.ID)
		case c.Handle && !c.OK:
			return Refuse("its pending call %d is a handle that is not a value", c.ID)
		}
		seen[c.ID] = true
		args += c.Size
	}
	if args > l.MaxInFlightArgBytes {
		return Refuse("its pending calls hold %d bytes of arguments, over its limit of %d", args, l.MaxInFlightArgBytes)
	}
	if err := m.Timers.check(); err != nil {
		return err
	}
	if err := checkWorld(&m.World); err != nil {
		return err
	}
	if len(m.Files) > wasifs.MaxOpen {
		// Each is checked against the guest's file system as it is opened
		// (engine.FileTable's RestoreFiles).
		return Refuse("it has %d open files, over the limit of %d", len(m.Files), wasifs.MaxOpen)
	}
	if len(m.Globals) != len(img.Globals) {
		return Refuse("it has %d globals, the guest %d", len(m.Globals), len(img.Globals))
	}
	for i, g := range m.Globals {
		if g.Name != img.Globals[i] {
			return Refuse("its global %d is %q, the guest's %q", i, g.Name, img.Globals[i])
		}
	}
	return nil
}

// checkOutput checks that the logs are what their count says, within the
// output limit.
func (m *Meta) checkOutput() error {
	used := 0
	for i, line := range m.Logs {
		if i > 0 {
			used++
		}
		used += len(line)
	}
	if used != m.OutputUsed || used > m.Limits.OutputBytes {
		return Refuse("its logs take %d bytes, it says %d (limit %d)", used, m.OutputUsed, m.Limits.OutputBytes)
	}
	return nil
}

func (t *Timers) check() error {
	if len(t.Entries) > abi.MaxTimers {
		return Refuse("it has %d timers, over the limit of %d", len(t.Entries), abi.MaxTimers)
	}
	if t.Fired < 0 || t.Last < 0 {
		return Refuse("its timers are out of range")
	}
	seen := make(map[int32]bool, len(t.Entries))
	for _, e := range t.Entries {
		if e.ID <= 0 || e.ID > t.Last || seen[e.ID] || e.At < 0 {
			return Refuse("its timer %d is out of range or repeated", e.ID)
		}
		seen[e.ID] = true
	}
	return nil
}

// checkWorld checks a snapshot's world.
func checkWorld(w *world.State) error {
	if w.Deterministic {
		if w.Wall < 0 || w.Mono < 0 || len(w.RNG) == 0 {
			return Refuse("its deterministic world is out of range")
		}
		var rng rand.ChaCha8
		if err := rng.UnmarshalBinary(w.RNG); err != nil {
			return Refuse("its random source is not valid: %v", err)
		}
	} else if len(w.RNG) != 0 {
		return Refuse("its world has a random source but is not deterministic")
	}
	return nil
}
