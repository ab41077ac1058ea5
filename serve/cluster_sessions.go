package serve

import (
	"context"
	"errors"
	"time"

	"github.com/ptcx/ptcx/wasmhost"
)

// Sessions in a cluster (session_state.go): a node claims a session's
// record before it runs a program in it, and may take over a session
// whose running node lost its lease.

// leaseAlive reports whether node holds a lease that has not expired.
func (c *cluster) leaseAlive(ctx context.Context, node string) (bool, error) {
	leases, err := c.st.Leases(ctx)
	if err != nil {
		return false, err
	}
	for _, l := range leases {
		if l.Node == node {
			return !l.Expired(time.Now()), nil
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
