// Package store holds what ptcx serve nodes share about executions: one
// record per execution (its state as the API shows it, its owner node,
// pending call ids, expiry and, while it is parked, a snapshot reference),
// the snapshots themselves (a parked execution's bytes), one lease per
// node, program-state sessions and idempotency keys' reservations. Every
// update is checked against the record's revision, so two nodes can never
// both own an execution.
//
// Three implementations: Memory (tests, one process), Dir (a local
// directory, one node, survives a restart) and NATS (JetStream KV, shared
// by any number of nodes). The package imports nothing of ptcx.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The errors of a Store, matched with errors.Is.
var (
	// ErrNotFound: no record (never written, deleted, or past its expiry).
	ErrNotFound = errors.New("store: no such record")
	// ErrExists: Create found a record under that id.
	ErrExists = errors.New("store: record exists")
	// ErrConflict: Update's revision is not the record's current one
	// (another node wrote it first).
	ErrConflict = errors.New("store: revision conflict (another node updated the record first)")
	// ErrUnavailable wraps a store that cannot be reached or used now.
	ErrUnavailable = errors.New("store: unavailable")
)

// Record is one execution as the nodes share it.
type Record struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	// Owner is the node running the execution; "" while it waits in the
	// overflow queue for a node with a free slot.
	Owner  string `json:"owner"`
	Status string `json:"status"`
	// Pending are the ids of the unanswered client-side calls.
	Pending []string `json:"pending,omitempty"`
	// ExpiresAt is when the record goes (the store drops it then).
	ExpiresAt time.Time `json:"expires_at"`
	// Snapshot names the execution's parked program state in the snapshot
	// store (PutSnapshot): set while it is parked, "" otherwise.
	Snapshot string `json:"snapshot,omitempty"`
	// Answers are the client's results for a parked execution's calls,
	// given while it waits on others (by parked call id), so that the
	// node that continues it has them.
	Answers json.RawMessage `json:"answers,omitempty"`
	// State is the execution as GET /v1/executions/{id} shows it.
	State json.RawMessage `json:"state"`
	// Reservation is the key of the reservation of the execution's
	// idempotency key (Reservations), "" for none: whoever deletes the
	// record deletes it too.
	Reservation string `json:"reservation,omitempty"`
	// Revision is the store's revision of this version (not stored).
	Revision uint64 `json:"-"`
}

// Lease is a node's claim on its executions, renewed while it lives.
type Lease struct {
	Node     string    `json:"node"`
	Until    time.Time `json:"until"`
	Revision uint64    `json:"-"`
}

// Lost reports whether the lease has lapsed by more than margin at now:
// its node may be declared lost (ptcx serve's fence gives it until then).
func (l Lease) Lost(now time.Time, margin time.Duration) bool { return now.After(l.Until.Add(margin)) }

// Store is the shared state of a ptcx serve cluster. Implementations are
// safe for concurrent use.
type Store interface {
	// Create writes a new record (ErrExists when the id is taken) and
	// returns its revision.
	Create(ctx context.Context, r Record) (uint64, error)
	// Get returns the current record (ErrNotFound).
	Get(ctx context.Context, id string) (Record, error)
	// Update replaces the record if r.Revision is still its current
	// revision (ErrConflict otherwise, ErrNotFound if it is gone) and
	// returns the new revision.
	Update(ctx context.Context, r Record) (uint64, error)
	// Delete removes a record (none is not an error): a settled execution
	// its node evicted over server.max_retained.
	Delete(ctx context.Context, id string) error
	// List returns every record not past its expiry.
	List(ctx context.Context) ([]Record, error)
	// RenewLease writes node's lease, valid until until.
	RenewLease(ctx context.Context, node string, until time.Time) error
	// Leases returns every node's lease, lapsed ones included.
	Leases(ctx context.Context) ([]Lease, error)
	// DropLease removes a lease if l.Revision is still current
	// (ErrConflict otherwise): a node reaping a dead one, or a node leaving.
	DropLease(ctx context.Context, l Lease) error
	// PutSnapshot writes a parked execution's bytes under name, whole: a
	// reader sees all of them or none (name as a record id).
	PutSnapshot(ctx context.Context, name string, data []byte) error
	// GetSnapshot reads them back (ErrNotFound), at most MaxSnapshotBytes.
	GetSnapshot(ctx context.Context, name string) ([]byte, error)
	// DeleteSnapshot removes them (none is not an error).
	DeleteSnapshot(ctx context.Context, name string) error
	// Sessions keeps the records of program-state sessions (session.go).
	Sessions
	// Reservations keeps the idempotency keys' reservations
	// (reservation.go).
	Reservations
	// Check reports whether the store is usable now (nil) or why not.
	Check(ctx context.Context) error
	// Close releases the store's connections.
	Close() error
}

// MaxSnapshotBytes bounds one parked execution's bytes in a store: a
// parked program's memory is at most the sandbox's memory limit (256 MiB
// by default), compressed, with its metadata.
const MaxSnapshotBytes = 512 << 20

// checkSnapshot refuses a snapshot over MaxSnapshotBytes.
func checkSnapshot(name string, n int64) error {
	if n > MaxSnapshotBytes {
		return fmt.Errorf("store: snapshot %s is %d bytes, over store.MaxSnapshotBytes (%d)", name, n, MaxSnapshotBytes)
	}
	return nil
}

// live reports whether r is not past its expiry at now.
func live(r Record, now time.Time) bool { return r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt) }
