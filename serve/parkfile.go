package serve

import (
	"fmt"
	"strings"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/internal/parkfile"
)

// A parked execution's bytes in the store or the spill: its meta (what
// serve knows of it beside the program) and its program, in the frame of
// serve/internal/parkfile; this file says what the meta holds and checks
// that it is the execution's.

// parkMeta is the meta of a parked execution's bytes.
type parkMeta struct {
	ID        string        `json:"id"`
	Tenant    string        `json:"tenant"`
	Spec      parkSpec      `json:"spec"`
	Created   time.Time     `json:"created"`
	Key       string        `json:"idempotency_key,omitempty"`
	Sum       []byte        `json:"sum"`
	Calls     []CallRecord  `json:"calls"`
	CallCount int           `json:"call_count"`
	Events    int           `json:"events"`            // the last event id so far
	Dropped   int           `json:"dropped,omitempty"` // the events over max_events so far, counted not kept
	Pending   []parkPending `json:"pending"`
}

type parkPending struct {
	Call    PendingCall `json:"call"`
	Expires time.Time   `json:"expires"`
	ParkID  int32       `json:"park_id"`
}

// parkFile is a decoded parked execution.
type parkFile struct {
	meta    parkMeta
	program []byte // executor.RestoreParked's input
}

// encodeParkFile writes x's parked bytes, p being its program.
func encodeParkFile(x *execution, p *executor.Parked, at time.Time) ([]byte, error) {
	prog, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	m := parkMetaLocked(x, len(p.Calls()))
	x.mu.Unlock()
	return encodeParkMeta(x.tenant, m, p, prog, at)
}

// encodeParkFileLocked is encodeParkFile for an execution parked in
// memory a while (park.go, spillParked), whose pending events are emitted
// already; x.mu is held.
func encodeParkFileLocked(x *execution, p *executor.Parked, at time.Time) ([]byte, error) {
	prog, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	return encodeParkMeta(x.tenant, parkMetaLocked(x, 0), p, prog, at)
}

// parkMetaLocked is x's record in its parked bytes, with the events as
// they will be once unemitted more pending events are: kept within
// max_events, counted past it; x.mu is held.
func parkMetaLocked(x *execution, unemitted int) parkMeta {
	kept, dropped := x.eventBase+len(x.events), x.dropped
	for range unemitted {
		if kept < x.maxEvents {
			kept++
		} else {
			dropped++
		}
	}
	return parkMeta{ID: x.id, Tenant: x.tenant.name, Spec: x.spec, Created: x.created, Key: x.key, Sum: x.sum[:],
		Calls: x.calls, CallCount: x.callCount, Events: kept, Dropped: dropped}
}

// encodeParkMeta is the parked bytes of m and p's program prog, parked
// at at by t.
func encodeParkMeta(t *tenant, m parkMeta, p *executor.Parked, prog []byte, at time.Time) ([]byte, error) {
	for _, c := range p.Calls() {
		pc := t.pendingOfParked(p, c, at)
		call := pc.call
		if call.Kind == KindTool {
			// Written as before approvals: a node that reads only those
			// still takes over an execution parked on client tools (one
			// parked on an approval it refuses, by the unknown member).
			call.Kind = ""
		}
		m.Pending = append(m.Pending, parkPending{Call: call, Expires: pc.expires, ParkID: c.ID})
	}
	return parkfile.Encode(m, prog)
}

// decodeParkFile reads a parked execution's bytes, refusing (wrapping
// parkfile.ErrFormat) a meta that names no execution, tenant or pending
// call; it allocates nothing beyond what the input holds.
func decodeParkFile(data []byte) (*parkFile, error) {
	var m parkMeta
	program, err := parkfile.Decode(data, &m)
	if err != nil {
		return nil, err
	}
	switch {
	case m.ID == "" || m.Tenant == "":
		return nil, parkfile.Errorf("its meta names no execution or tenant")
	case len(m.Pending) == 0:
		return nil, parkfile.Errorf("its meta has no pending call")
	case m.CallCount < 0 || m.Events < 0 || m.Dropped < 0:
		return nil, parkfile.Errorf("its meta has a negative count")
	}
	return &parkFile{meta: m, program: program}, nil
}

// belongsTo checks that pf, read as data from the store under name, is
// the parked state of execution id of tenant: its meta says so, and name
// is id's and, as names are made now (snapshotNameOf), carries data's
// checksum. A name of two parts ("<id>.<random>", as older nodes wrote)
// carries none: the meta is checked alone.
func (pf *parkFile) belongsTo(id, tenant, name string, data []byte) error {
	m := pf.meta
	if m.ID != id || m.Tenant != tenant {
		return fmt.Errorf("its snapshot %s is the parked state of execution %s of tenant %s, not of %s of %s: it is refused, never resumed as this execution",
			name, m.ID, m.Tenant, id, tenant)
	}
	rest, ok := strings.CutPrefix(name, id+".")
	if !ok {
		return fmt.Errorf("its snapshot's name %s is not one of execution %s: it is refused", name, id)
	}
	if _, sum, ok := strings.Cut(rest, "."); ok && sum != snapshotSum(data) {
		return fmt.Errorf("its snapshot %s is corrupt or not the one its record names: its bytes' checksum is %s: it is refused", name, snapshotSum(data))
	}
	return nil
}

// holds checks that the program p restored from pf is pf's execution,
// waiting on the calls pf's meta names (their ids, tools and the IDs
// their results are posted with).
func (pf *parkFile) holds(p *executor.Parked) error {
	m := pf.meta
	if got := p.ExecutionID(); got != m.ID {
		return fmt.Errorf("its snapshot's program is execution %s's, its meta execution %s's: it is refused", got, m.ID)
	}
	calls := p.Calls()
	if len(calls) != len(m.Pending) {
		return fmt.Errorf("its snapshot's program waits on %d calls, its meta names %d: it is refused", len(calls), len(m.Pending))
	}
	for i, c := range calls {
		mp := m.Pending[i]
		if mp.ParkID != c.ID || mp.Call.Name != c.Tool || mp.Call.ID != p.CallID(c.ID) || (mp.Call.Kind == KindApproval) != (c.Kind == executor.ParkedApproval) {
			return fmt.Errorf("its snapshot's program waits on call %d (%s, %s), its meta names call %d (%s, %s): it is refused",
				c.ID, c.Tool, p.CallID(c.ID), mp.ParkID, mp.Call.Name, mp.Call.ID)
		}
	}
	return nil
}
