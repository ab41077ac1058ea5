package cluster

import (
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/serve/protocol"
)

// Execution is what the cluster reads and asks of one of its node's
// executions (serve's execution implements it): who it is, the epoch it
// runs under, its state and events, whether it is parked and on what
// bytes, and the two things the cluster does to it directly (cancel its
// run, release its program).
type Execution interface {
	ID() string
	Tenant() string
	Key() string // its idempotency key, "" for none
	Created() time.Time
	Sum() [32]byte // the hash of its request body
	// Epoch is the lease epoch it runs under (0: none), SetEpoch sets it.
	Epoch() uint64
	SetEpoch(e uint64)
	// SessionWait is how long its tenant waits for a held session.
	SessionWait() time.Duration
	// State is its state on the wire.
	State() protocol.ExecutionState
	// EventsAfter returns its events after id, whether it is done, and a
	// channel closed at its next event.
	EventsAfter(id int) ([]protocol.Event, bool, <-chan struct{})
	// IsParked reports whether it is parked, IsReleased whether its
	// program is released (parked on its bytes in the store only).
	IsParked() bool
	IsReleased() bool
	// ParkedState is the snapshot it is parked on and the answers given
	// to its calls; SnapshotName the name of its bytes in the store.
	ParkedState() (snapshot string, answers json.RawMessage)
	SnapshotName() string
	// CancelRun cancels its run; ReleaseProgram releases the program a
	// parked one holds in memory.
	CancelRun()
	ReleaseProgram()
}
