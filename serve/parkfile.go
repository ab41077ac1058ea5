package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ptcx/ptcx/executor"
)

// A parked execution's bytes in the store: what serve knows of it beside
// the program (executor.Parked.Marshal), so that any node can continue it.
//
//	"PTCXSRVP" | version u32 | meta length u32 | meta (JSON) | program
//
// The program's bytes carry their own checksum and bounds
// (executor.RestoreParked); the meta is bounded by maxParkMetaBytes.

const (
	parkFileMagic   = "PTCXSRVP"
	parkFileVersion = 1
	// maxParkMetaBytes bounds the meta: the client tools' schemas (within
	// the request's size limit) and up to max_events call records.
	maxParkMetaBytes = 64 << 20
)

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
func encodeParkFile(x *execution, p *executor.Parked, expires time.Time) ([]byte, error) {
	prog, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	// The events as they will be once park emitted one pending event per
	// call: kept within max_events, counted past it.
	kept, dropped := x.eventBase+len(x.events), x.dropped
	for range p.Calls() {
		if kept < x.maxEvents {
			kept++
		} else {
			dropped++
		}
	}
	m := parkMeta{ID: x.id, Tenant: x.tenant.name, Spec: x.spec, Created: x.created, Key: x.key, Sum: x.sum[:],
		Calls: x.calls, CallCount: x.callCount, Events: kept, Dropped: dropped}
	x.mu.Unlock()
	for _, c := range p.Calls() {
		m.Pending = append(m.Pending, parkPending{Call: PendingCall{ID: p.CallID(c.ID), Name: c.Tool, Arguments: c.Args}, Expires: expires, ParkID: c.ID})
	}
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(mb) > maxParkMetaBytes {
		return nil, fmt.Errorf("its meta is %d bytes, over %d", len(mb), maxParkMetaBytes)
	}
	out := make([]byte, 0, 16+len(mb)+len(prog))
	out = append(out, parkFileMagic...)
	out = binary.BigEndian.AppendUint32(out, parkFileVersion)
	out = binary.BigEndian.AppendUint32(out, uint32(len(mb)))
	out = append(out, mb...)
	return append(out, prog...), nil
}

// errParkFile wraps every refusal of decodeParkFile.
var errParkFile = errors.New("not a parked execution of ptcx serve")

// decodeParkFile reads a parked execution's bytes; it allocates nothing
// beyond what the input holds.
func decodeParkFile(data []byte) (*parkFile, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errParkFile, fmt.Sprintf(format, args...))
	}
	if len(data) < 16 || string(data[:8]) != parkFileMagic {
		return nil, bad("it does not start with %q and its 16-byte header", parkFileMagic)
	}
	if v := binary.BigEndian.Uint32(data[8:]); v != parkFileVersion {
		return nil, bad("it is of version %d; this node reads version %d only", v, parkFileVersion)
	}
	n := uint64(binary.BigEndian.Uint32(data[12:]))
	if n > maxParkMetaBytes || n > uint64(len(data)-16) {
		return nil, bad("its meta claims %d bytes and %d are left (at most %d)", n, len(data)-16, maxParkMetaBytes)
	}
	var m parkMeta
	d := json.NewDecoder(bytes.NewReader(data[16 : 16+n]))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return nil, bad("its meta: %v", err)
	}
	switch {
	case m.ID == "" || m.Tenant == "":
		return nil, bad("its meta names no execution or tenant")
	case len(m.Pending) == 0:
		return nil, bad("its meta has no pending call")
	case m.CallCount < 0 || m.Events < 0 || m.Dropped < 0:
		return nil, bad("its meta has a negative count")
	}
	return &parkFile{meta: m, program: data[16+n:]}, nil
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
		if mp.ParkID != c.ID || mp.Call.Name != c.Tool || mp.Call.ID != p.CallID(c.ID) {
			return fmt.Errorf("its snapshot's program waits on call %d (%s, %s), its meta names call %d (%s, %s): it is refused",
				c.ID, c.Tool, p.CallID(c.ID), mp.ParkID, mp.Call.Name, mp.Call.ID)
		}
	}
	return nil
}
