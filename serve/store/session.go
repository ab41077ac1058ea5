package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// SessionRecord is one program-state session (a keep_state session of
// ptcx serve) as the nodes share it: who ran it last, who runs a program
// in it now, and where its latest saved state is (a snapshot, named in the
// snapshot store). Like a Record, every update is checked against its
// revision, so two nodes never both run a program in one session.
type SessionRecord struct {
	// Key is the record's key (as a record id: checkName), derived by the
	// caller from Tenant, Scope and Name.
	Key    string `json:"key"`
	Tenant string `json:"tenant"`
	Scope  string `json:"scope,omitempty"`
	Name   string `json:"name"`
	// LastNode is the node that saved the session's state last.
	LastNode string `json:"last_node,omitempty"`
	// Running is the node running a program in the session now, "" when
	// none is.
	Running string `json:"running,omitempty"`
	// Snapshot names the session's latest saved state in the snapshot
	// store, "" when it has none (new, or reset).
	Snapshot string `json:"snapshot,omitempty"`
	// ExpiresAt is when the record goes (the store drops it then).
	ExpiresAt time.Time `json:"expires_at"`
	// Revision is the store's revision of this version (not stored).
	Revision uint64 `json:"-"`
}

// Sessions is the part of a Store that keeps session records, beside the
// execution records (List never returns them).
type Sessions interface {
	// CreateSession writes a new session record (ErrExists when the key is
	// taken) and returns its revision.
	CreateSession(ctx context.Context, r SessionRecord) (uint64, error)
	// GetSession returns the current session record (ErrNotFound).
	GetSession(ctx context.Context, key string) (SessionRecord, error)
	// UpdateSession replaces the session record if r.Revision is still its
	// current revision (ErrConflict otherwise, ErrNotFound if it is gone)
	// and returns the new revision.
	UpdateSession(ctx context.Context, r SessionRecord) (uint64, error)
	// DeleteSession removes a session record (none is not an error).
	DeleteSession(ctx context.Context, key string) error
	// CountSessions counts the live session records whose key starts with
	// prefix (a caller's key prefix, such as a tenant's "HASH.", itself a
	// valid record id followed by a dot).
	CountSessions(ctx context.Context, prefix string) (int, error)
}

// checkSessionPrefix checks a CountSessions prefix: a record id and a dot.
func checkSessionPrefix(prefix string) error {
	id, ok := strings.CutSuffix(prefix, ".")
	if !ok {
		return fmt.Errorf("store: session key prefix %q must end with a dot", prefix)
	}
	return checkName("session key prefix", id)
}

func liveSession(r SessionRecord, now time.Time) bool {
	return r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt)
}
