package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
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
	Events    int           `json:"events"` // the last event id so far
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
	m := parkMeta{ID: x.id, Tenant: x.tenant.name, Spec: x.spec, Created: x.created, Key: x.key, Sum: x.sum[:],
		Calls: x.calls, CallCount: x.callCount, Events: x.eventBase + len(x.events) + len(p.Calls())}
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
	case m.CallCount < 0 || m.Events < 0:
		return nil, bad("its meta has a negative count")
	}
	return &parkFile{meta: m, program: data[16+n:]}, nil
}
