package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/store"
	"github.com/ptcx/ptcx/wasmhost"
)

// Sessions in the store (session_state.go): a node claims a session's
// record before it runs a program in it, and may take over a session
// whose running node lost its lease; the executor loads and saves the
// session's state through sessionStore, under that claim.

// leaseAlive reports whether node holds a lease that has not expired, by
// more than the margin (gone).
func (c *cluster) leaseAlive(ctx context.Context, node string) (bool, error) {
	leases, err := c.st.Leases(ctx)
	if err != nil {
		return false, err
	}
	for _, l := range leases {
		if l.Node == node {
			return !c.gone(l, time.Now()), nil
		}
	}
	return false, nil
}

// sessionSandbox is a sandbox that keeps program-state sessions:
// *wasmhost.Runtime.
type sessionSandbox interface {
	NewSession(ctx context.Context) (*wasmhost.Session, error)
	ImportSession(ctx context.Context, b []byte) (*wasmhost.Session, error)
}

var errNoSessions = errors.New("serve: the sandbox does not keep sessions (it is not a *wasmhost.Runtime with its image)")

// NewSession makes a tenant's sessions in the shared sandbox: their runs
// are charged as any (Run).
func (m *meteredRuntime) NewSession(ctx context.Context) (*wasmhost.Session, error) {
	if rt, ok := m.inner.(sessionSandbox); ok {
		return rt.NewSession(ctx)
	}
	return nil, errNoSessions
}

// ImportSession takes a session's saved state back into the shared
// sandbox.
func (m *meteredRuntime) ImportSession(ctx context.Context, b []byte) (*wasmhost.Session, error) {
	if rt, ok := m.inner.(sessionSandbox); ok {
		return rt.ImportSession(ctx, b)
	}
	return nil, errNoSessions
}

// sessionStore is the executor's SessionStore: it loads and saves a
// session's state under the claim its call's context carries (whose
// programSessions are the Server's, made once its store is open).
type sessionStore struct{}

var _ executor.SessionStore = sessionStore{}

func (sessionStore) claim(ctx context.Context, name string) (*sessionClaim, error) {
	c := claimOf(ctx)
	if c == nil || c.rec.Name != name {
		return nil, fmt.Errorf("serve: session %q is not claimed by this call", name)
	}
	return c, nil
}

// Load implements executor.SessionStore: the state the claimed record
// names.
func (s sessionStore) Load(ctx context.Context, _, name string) ([]byte, error) {
	c, err := s.claim(ctx, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	snap := c.rec.Snapshot
	c.mu.Unlock()
	if snap == "" {
		return nil, nil
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	b, err := c.ps.st.GetSnapshot(sctx, snap)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: session %q: its saved state %s is missing from the store", executor.ErrSessionLost, name, snap)
	}
	return b, err
}

// Save implements executor.SessionStore: the bytes under a fresh
// snapshot name, then the record pointing at them (revision-checked: a
// session another node took over meanwhile is not overwritten), then the
// old snapshot deleted.
func (s sessionStore) Save(ctx context.Context, _, name string, b []byte) error {
	if err := fenceCheck(ctx); err != nil { // a node that cannot prove its lease saves nothing (fence.go)
		return err
	}
	c, err := s.claim(ctx, name)
	if err != nil {
		return err
	}
	snap := newSnapshotName()
	if err := c.ps.st.PutSnapshot(ctx, snap, b); err != nil {
		return err
	}
	if err := c.point(ctx, snap); err != nil {
		_ = c.ps.st.DeleteSnapshot(ctx, snap)
		return err
	}
	return nil
}

// Delete implements executor.SessionStore: the record names no state
// (the session was reset), and the old snapshot is deleted.
func (s sessionStore) Delete(ctx context.Context, _, name string) error {
	if err := fenceCheck(ctx); err != nil {
		return err
	}
	c, err := s.claim(ctx, name)
	if err != nil {
		return err
	}
	return c.point(ctx, "")
}

// point makes the claimed record name snap as the session's state and
// deletes the snapshot it named before.
func (c *sessionClaim) point(ctx context.Context, snap string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost {
		return errors.New("another node took the session over while this program ran (this node's lease lapsed)")
	}
	rec := c.rec
	old := rec.Snapshot
	rec.Snapshot, rec.LastNode, rec.ExpiresAt = snap, c.ps.node, time.Now().Add(c.t.state.ttl)
	rev, err := c.ps.st.UpdateSession(ctx, rec)
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		c.lost = true
		return errors.New("another node took the session over while this program ran (this node's lease lapsed)")
	}
	if err != nil {
		return err
	}
	rec.Revision = rev
	c.rec = rec
	if old != "" {
		if err := c.ps.st.DeleteSnapshot(ctx, old); err != nil {
			c.ps.log.Warn("a session's replaced state could not be deleted from the store", "snapshot", old, "error", err.Error())
		}
	}
	return nil
}

// newSnapshotName names a session's saved state in the snapshot store.
func newSnapshotName() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "ss_" + hex.EncodeToString(b[:])
}
