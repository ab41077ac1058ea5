package wasmhost

import (
	"bytes"
	"context"
	"fmt"

	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// Sessions out of and into a Runtime: a session's state as self-contained
// bytes (the PTCXSESS encoding of session_bytes.go), so that a host may
// keep it elsewhere (a store shared by several processes) and continue it
// in another Runtime of the same guest build, in this process or another.

// Export returns the session's state as bytes that ImportSession, on any
// Runtime of the same guest and image, turns back into a session: a live
// session's state is captured and the session stays live; a suspended
// one's bytes are returned as they are. An empty session returns nil, nil
// (there is no state to keep). It fails with ErrSessionBusy while a
// program runs, ErrSessionClosed on a closed session and ErrClosed on a
// closed Runtime. The bytes are the caller's: the session keeps its own.
func (s *Session) Export(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, ErrSessionClosed
	case s.busy:
		return nil, ErrSessionBusy
	case s.inst == nil:
		return bytes.Clone(s.saved), nil
	}
	// Counted as a guest that runs, so that a Close meanwhile releases the
	// instance's memory only once the capture is done.
	if !s.rt.acquire() {
		return nil, ErrClosed
	}
	defer s.rt.done()
	return s.rt.captureSession(s.inst)
}

// ImportSession returns a suspended session of rt holding b, bytes that
// Session.Export made: its next run restores the state from them, as it
// would after Session.Suspend. The bytes are checked at once (they are
// decoded as untrusted): bytes that are not a session's, truncated or
// corrupt, made by another guest or image, or whose memory is over rt's
// memory limit are refused with an error matching ErrSessionBytes that
// says why. It fails with ErrClosed on a closed Runtime, and without an
// image (Config.WithImage) as NewSession's runs do. rt keeps its own copy
// of b. The session's language (Session.Language) is that of the guest
// that made b: bytes of a Python session are a Python session, whose runs
// are rt's Python programs (python.go), and bytes of the Python guest on a
// Runtime that cannot run Python are refused (ErrSessionBytes, saying why).
func (rt *Runtime) ImportSession(ctx context.Context, b []byte) (*Session, error) {
	if rt.closed.Load() {
		return nil, ErrClosed
	}
	if rt.image == nil {
		return nil, errSessionNoImage
	}
	g, err := rt.guestOf(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSessionBytes, err)
	}
	if g.image == nil {
		return nil, errSessionNoImage
	}
	if _, err := snapshot.DecodeSession(g.image.base(), g.limits.MemoryBytes, b); err != nil {
		return nil, err
	}
	return &Session{rt: g, lang: g.lang.Canonical(), saved: bytes.Clone(b)}, nil
}
