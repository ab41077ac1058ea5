package wasmhost

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// check refuses a table no suspended run could have had: every count,
// id, size and name is checked, so that a resumed run starts within its
// limits and the guest is fed only what it could have asked for.
func (m *snapshotMeta) check(img *image, memSize int64) error {
	l := m.Limits
	if err := l.Validate(); err != nil {
		return refuse("its limits are invalid: %v", err)
	}
	if l != l.WithDefaults() {
		return refuse("its limits are not complete")
	}
	switch {
	case m.Compute < 0 || m.Wall < 0:
		return refuse("its compute time %d or wall time %d is negative", m.Compute, m.Wall)
	case m.Calls < 0 || m.RefusedCalls < 0 || m.Calls+m.RefusedCalls > l.MaxCalls:
		return refuse("its %d calls and %d refused ones are out of range (at most %d)", m.Calls, m.RefusedCalls, l.MaxCalls)
	case m.LastID < 0 || int64(m.LastID) != int64(m.Calls)+int64(m.RefusedCalls):
		return refuse("its last call id %d does not match its %d calls", m.LastID, m.Calls+m.RefusedCalls)
	case len(m.Pending) == 0 && len(m.Timers.Entries) == 0:
		return refuse("it waits on no call and no timer, so it could never go on")
	case len(m.Pending) > l.MaxPendingCalls:
		return refuse("it has %d calls pending, over its limit of %d", len(m.Pending), l.MaxPendingCalls)
	case int64(m.BufPtr)+int64(m.BufCap) > memSize:
		return refuse("its exchange buffer [%d, +%d) is outside its memory", m.BufPtr, m.BufCap)
	}
	tools := make(map[string]bool, len(m.Tools))
	for _, name := range m.Tools {
		if !utf8.ValidString(name) || len(name) > abi.MaxNameBytes {
			return refuse("a tool name is not valid UTF-8 or is too long")
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
			return refuse("its pending call id %d is out of range or repeated", c.ID)
		case c.Size < 0 || c.Size > l.MaxCallArgBytes || (c.Name != "" && c.Size != len(c.Args)):
			return refuse("its pending call %d's arguments are out of range", c.ID)
		case c.Name == "" && !c.Answered:
			return refuse("its pending call %d has no tool and no answer", c.ID)
		case c.Name != "" && !tools[c.Name]:
			return refuse("its pending call %d names a tool the program is not bound to", c.ID)
		case !c.Answered && (c.OK || c.Value != nil || c.Message != "" || c.Code != ""):
			return refuse("its pending call %d has an answer but is not answered", c.ID)
		}
		seen[c.ID] = true
		args += c.Size
	}
	if args > l.MaxInFlightArgBytes {
		return refuse("its pending calls hold %d bytes of arguments, over its limit of %d", args, l.MaxInFlightArgBytes)
	}
	if err := m.Timers.check(); err != nil {
		return err
	}
	if err := checkWorld(&m.World); err != nil {
		return err
	}
	if len(m.Globals) != len(img.globals) {
		return refuse("it has %d globals, the guest %d", len(m.Globals), len(img.globals))
	}
	for i, g := range m.Globals {
		if g.Name != img.globals[i] {
			return refuse("its global %d is %q, the guest's %q", i, g.Name, img.globals[i])
		}
	}
	return nil
}

// checkOutput checks that the logs are what their count says, within the
// output limit.
func (m *snapshotMeta) checkOutput() error {
	used := 0
	for i, line := range m.Logs {
		if i > 0 {
			used++
		}
		used += len(line)
	}
	if used != m.OutputUsed || used > m.Limits.OutputBytes {
		return refuse("its logs take %d bytes, it says %d (limit %d)", used, m.OutputUsed, m.Limits.OutputBytes)
	}
	return nil
}

func (t *snapTimers) check() error {
	if len(t.Entries) > abi.MaxTimers {
		return refuse("it has %d timers, over the limit of %d", len(t.Entries), abi.MaxTimers)
	}
	if t.Fired < 0 || t.Last < 0 {
		return refuse("its timers are out of range")
	}
	seen := make(map[int32]bool, len(t.Entries))
	for _, e := range t.Entries {
		if e.ID <= 0 || e.ID > t.Last || seen[e.ID] || e.At < 0 {
			return refuse("its timer %d is out of range or repeated", e.ID)
		}
		seen[e.ID] = true
	}
	return nil
}

// checkWorld checks a snapshot's world.
func checkWorld(w *world.State) error {
	if w.Deterministic {
		if w.Wall < 0 || w.Mono < 0 || len(w.RNG) == 0 {
			return refuse("its deterministic world is out of range")
		}
		var rng rand.ChaCha8
		if err := rng.UnmarshalBinary(w.RNG); err != nil {
			return refuse("its random source is not valid: %v", err)
		}
	} else if len(w.RNG) != 0 {
		return refuse("its world has a random source but is not deterministic")
	}
	return nil
}

// snapshot lists the pending timers, their deadlines relative to began.
func (q *timerQueue) snapshot(began time.Time) snapTimers {
	t := snapTimers{Last: q.last}
	if !q.fired.IsZero() {
		t.Fired = max(int64(q.fired.Sub(began)), 1)
	}
	for _, e := range q.order {
		if _, ok := q.live[e.id]; ok {
			t.Entries = append(t.Entries, snapTimer{ID: e.id, At: max(int64(e.at.Sub(began)), 0)})
		}
	}
	slices.SortFunc(t.Entries, func(a, b snapTimer) int { return int(a.ID - b.ID) })
	return t
}

// restoreTimers re-arms a snapshot's timers, relative to began.
func (q *timerQueue) restore(t snapTimers, began time.Time) {
	q.last = t.Last
	if t.Fired > 0 {
		q.fired = began.Add(time.Duration(t.Fired))
	}
	q.live = make(map[int32]struct{}, len(t.Entries))
	for _, e := range t.Entries {
		q.live[e.ID] = struct{}{}
		heap.Push(&q.order, timerEntry{at: began.Add(time.Duration(e.At)), id: e.ID})
	}
}
