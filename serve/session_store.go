package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/internal/fence"
	"github.com/ptcx/ptcx/serve/store"
	"github.com/ptcx/ptcx/wasmhost"
)

// Sessions in the store (session_state.go): a node claims a session's
// record before it runs a program in it, and may take over a session
// whose running node lost its lease; the executor loads and saves the
// session's state through sessionStore, under that claim.

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
	if c == nil || c.name != name {
		return nil, fmt.Errorf("serve: session %q is not claimed by this call", name)
	}
	return c, nil
}

// Load implements executor.SessionStore: the state the claimed record
// names, once its object's name and its bytes prove it is the claimed
// session's (session_bytes.go). State that is not (another session's,
// copied or renamed, corrupt, written before sessions were bound to their
// state) is refused and logged, and the program starts afresh
// (executor.ErrSessionLost); it is never restored, and the object is left
// as it is.
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
	sum, ours := sessionObjectSum(c.key, snap)
	if !ours {
		return nil, c.refuse(snap, errors.New("its name is not one of this session's objects (written before sessions were bound to their state, or the record was altered in the store)"))
	}
	sctx, cancel := context.WithTimeout(ctx, cluster.StoreTimeout)
	defer cancel()
	b, err := c.ps.st.GetSnapshot(sctx, snap)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: session %q: its saved state %s is missing from the store", executor.ErrSessionLost, name, snap)
	}
	if err != nil {
		return nil, err
	}
	m, state, err := decodeSessionFile(b)
	if err == nil {
		err = m.belongsTo(c.t.name, c.scope, c.name, snap)
	}
	if err == nil && !strings.HasPrefix(m.SHA256, sum) {
		err = errors.New("its bytes' checksum is not the one its name carries")
	}
	if err != nil {
		return nil, c.refuse(snap, err)
	}
	return state, nil
}

// refuse logs that the saved state in object was refused for why, and
// returns the error Load gives the executor: the program starts afresh.
// The program's notice says why, never whose the bytes are.
func (c *sessionClaim) refuse(object string, why error) error {
	c.ps.log.Warn("refused a session's saved state: the session starts afresh, the object is left in the store",
		"tenant", c.t.name, "scope", c.scope, "session", c.name, "snapshot", object, "error", why.Error())
	return fmt.Errorf("%w: session %q: its saved state in the store is refused: %v", executor.ErrSessionLost, c.name, why)
}

// Save implements executor.SessionStore: the bytes, in their envelope,
// under a fresh object name of the session's, then the record pointing at
// them (revision-checked: a session another node took over meanwhile is
// not overwritten), then the old object deleted if it is the session's
// own.
func (s sessionStore) Save(ctx context.Context, _, name string, b []byte) error {
	if err := fence.Check(ctx); err != nil { // a node that cannot prove its lease saves nothing (serve/internal/fence)
		return err
	}
	c, err := s.claim(ctx, name)
	if err != nil {
		return err
	}
	snap := sessionObjectName(c.key, b)
	sum := sha256.Sum256(b)
	data, err := encodeSessionFile(sessionMeta{Tenant: c.t.name, Scope: c.scope, Name: c.name, Object: snap, SHA256: hex.EncodeToString(sum[:])}, b)
	if err != nil {
		return err
	}
	if err := c.ps.st.PutSnapshot(ctx, snap, data); err != nil {
		return err
	}
	if err := c.point(ctx, snap); err != nil {
		_ = c.ps.st.DeleteSnapshot(ctx, snap)
		return err
	}
	return nil
}

// Delete implements executor.SessionStore: the record names no state
// (the session was reset), and the old object is deleted if it is the
// session's own.
func (s sessionStore) Delete(ctx context.Context, _, name string) error {
	if err := fence.Check(ctx); err != nil {
		return err
	}
	c, err := s.claim(ctx, name)
	if err != nil {
		return err
	}
	return c.point(ctx, "")
}

// point makes the claimed record name snap as the session's state and
// deletes the object it named before (deleteOwn).
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
	c.deleteOwn(ctx, old)
	return nil
}

// deleteOwn deletes object, a state the session's record named, if its
// name is one of the claimed session's (sessionObjectSum): an object the
// session did not write is never deleted, only logged.
func (c *sessionClaim) deleteOwn(ctx context.Context, object string) {
	if object == "" {
		return
	}
	if _, ours := sessionObjectSum(c.key, object); !ours {
		c.ps.log.Warn("a session's record named an object that is not one of the session's: it is not deleted (written before sessions were bound to their state, or the record was altered in the store)",
			"tenant", c.t.name, "scope", c.scope, "session", c.name, "snapshot", object)
		return
	}
	if err := c.ps.st.DeleteSnapshot(ctx, object); err != nil {
		c.ps.log.Warn("a session's replaced or deleted state could not be deleted from the store", "tenant", c.t.name, "session", c.name, "snapshot", object, "error", err.Error())
	}
}
