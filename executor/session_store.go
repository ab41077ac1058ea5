package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// A session store keeps run_code sessions' state outside the process
// (docs/architecture.md, "Sessions"): a session not in the executor's
// table is loaded from it, and after each program the session's state is
// saved to it, so that another process sharing the store continues the
// session where this one left it. Without one, sessions live in this
// process only.

// SessionStore keeps the state of run_code sessions as bytes
// (wasmhost.Session.Export), keyed by scope and name. Implementations
// must be safe for concurrent use; they need not order the saves of one
// session (the executor saves a session only while it holds the session's
// turn), and they are not told about a session's live state between
// saves.
type SessionStore interface {
	// Load returns the saved state of session name of scope, or nil, nil
	// when there is none.
	Load(ctx context.Context, scope, name string) ([]byte, error)
	// Save replaces the saved state of session name of scope with b.
	Save(ctx context.Context, scope, name string, b []byte) error
	// Delete removes the saved state of session name of scope; deleting
	// one that is not there is not an error.
	Delete(ctx context.Context, scope, name string) error
}

// ErrSessionLost, wrapped in the error of a SessionStore's Load, means the
// session's saved state is gone for good (the store lost it): instead of
// failing the call, the session starts afresh and the call's first log
// line says why.
var ErrSessionLost = errors.New("executor: the session's saved state is lost")

// SessionStoreTimeout bounds each Save and Delete the executor asks of
// its session store after a program ended. They run on a context that the
// call's cancellation does not reach (the program ran: its state is kept
// even when its caller has gone), so this bounds a store that hangs.
const SessionStoreTimeout = 30 * time.Second

// WithSessionStore keeps run_code sessions' state in st as well as in
// this process: a session this executor does not hold is loaded from st
// (a Load failure fails the call with BUSY: nothing ran; one matching
// ErrSessionLost starts the session afresh instead), and after each
// program in a session its state is saved to st (the session stays live
// here). A state that cannot be saved, or is over SessionLimits.MaxBytes,
// is reported in that call's output as a notice, and the result stands;
// a failed save is also logged (slog's default logger). CloseSession
// deletes a session from st (returning the store's error); DropSession forgets this process's copy
// only. Nil keeps sessions in memory, the default.
func (c Config) WithSessionStore(st SessionStore) Config {
	c.sessionStore = st
	return c
}

// sessionImporter is a sessionRuntime that takes session bytes back:
// *wasmhost.Runtime.
type sessionImporter interface {
	ImportSession(ctx context.Context, b []byte) (*wasmhost.Session, error)
}

// open makes the state of a session the table does not hold: the
// store's, when there is a store and it has one, else a new session. A
// saved state that cannot be restored (corrupt, another guest, over
// MaxBytes) is not: the session starts afresh, and notice says why.
//
// The store's bytes carry the session's context label (flow.go), its
// handles (handles.go) and its programs' language in a frame before the
// state (session_frame.go); open sets *head from it, and refuses a state
// of another language than the frame's. A program of another language
// than the frame's (lang) is refused before the state is imported: the
// state is neither made afresh, which would save over it, nor given to a
// guest this deployment may not run. A state that is not restored
// restores no handle: no program state holds their refs.
func (t *sessions) open(ctx context.Context, rt sessionRuntime, scope, name string, lang api.Language, head *sessionHead) (*wasmhost.Session, string, error) {
	fresh := func(notice string) (*wasmhost.Session, string, error) {
		head.handles = nil
		ws, err := rt.NewSession(ctx)
		if err != nil {
			return nil, "", internal("run_code could not start a session", err)
		}
		return ws, notice, nil
	}
	if t.store == nil {
		return fresh("")
	}
	b, err := t.store.Load(ctx, scope, name)
	switch {
	case errors.Is(err, ErrSessionLost):
		return fresh(fmt.Sprintf("the session's saved state could not be restored, so this program starts afresh: %v", err))
	case err != nil && ctx.Err() != nil:
		return nil, "", &api.Error{Code: api.CodeAborted, Cause: err,
			Message: fmt.Sprintf("run_code was cancelled while it loaded session %q from the session store; nothing ran", name)}
	case err != nil:
		return nil, "", &api.Error{Code: api.CodeBusy, Cause: err, Message: fmt.Sprintf(
			"run_code could not start: session %q could not be loaded from the session store (%v); nothing ran, retry later", name, err)}
	case b == nil:
		return fresh("")
	case len(b) > t.limits.MaxBytes:
		return fresh(fmt.Sprintf("the session's saved state was not restored, so this program starts afresh: it takes %d bytes, "+
			"over the limit of %d bytes a session may keep", len(b), t.limits.MaxBytes))
	}
	*head, b, err = unframeSession(b)
	if err != nil {
		return fresh(fmt.Sprintf("the session's saved state could not be restored, so this program starts afresh: %v", err))
	}
	if head.lang != lang {
		return nil, "", otherLanguage(name, head.lang, lang)
	}
	im, ok := rt.(sessionImporter)
	if !ok {
		return nil, "", internal("run_code sessions kept in a store need a code runtime that imports sessions (a *wasmhost.Runtime)", nil)
	}
	ws, err := im.ImportSession(ctx, b)
	if err != nil {
		if !errors.Is(err, wasmhost.ErrSessionBytes) {
			return nil, "", internal("run_code could not start a session", err)
		}
		return fresh(fmt.Sprintf("the session's saved state could not be restored, so this program starts afresh: %v", err))
	}
	if got := ws.Language(); got != head.lang {
		ws.Close(ctx)
		return fresh(fmt.Sprintf("the session's saved state could not be restored, so this program starts afresh: "+
			"its frame says its programs are %s, but its state is the %s guest's", head.lang.Title(), got.Title()))
	}
	return ws, "", nil
}

// save saves the state of s to the store after a program, its turn held
// by the caller, and returns what the program's output must say: that the
// state could not be saved, or was over MaxBytes (then it is reset, here
// and in the store), or "". A session closed or dropped meanwhile is not
// saved.
func (t *sessions) save(ctx context.Context, s *session) string {
	if t.store == nil {
		return ""
	}
	s.saving.Lock()
	defer s.saving.Unlock()
	t.mu.Lock()
	closed := s.closed
	t.mu.Unlock()
	if closed {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SessionStoreTimeout)
	defer cancel()
	b, err := s.ws.Export(ctx)
	if err != nil {
		return t.saveFailed(s, fmt.Errorf("export the session's state: %w", err))
	}
	notice := ""
	if b != nil {
		held := s.handles.valueBytes()
		b = frameSession(sessionHead{label: s.flow.context(), handles: s.handles.parked(), lang: s.ws.Language()}, b) // session_frame.go
		if len(b) > t.limits.MaxBytes {
			s.ws.Reset(ctx)
			s.handles = nil
			notice = fmt.Sprintf("the session's state was reset after this program: saved, it took %d bytes, "+
				"over the limit of %d bytes a session may keep; keep less data in globals", len(b), t.limits.MaxBytes)
			if held > 0 {
				notice += fmt.Sprintf(" (%d of them the values of the handles its programs received, which a session keeps until it is closed)", held)
			}
			b = nil
		}
	}
	if b == nil {
		err = t.store.Delete(ctx, s.scope, s.name)
	} else {
		err = t.store.Save(ctx, s.scope, s.name, b)
	}
	if err != nil {
		return join(notice, t.saveFailed(s, err))
	}
	return notice
}

// saveFailed logs a failed save and returns its notice.
func (t *sessions) saveFailed(s *session, err error) string {
	slog.Default().Warn("ptcx: a run_code session's state could not be saved to the session store",
		"scope", s.scope, "session", s.name, "error", err)
	return fmt.Sprintf("the session's state could not be saved to the session store (%v): this result stands and this "+
		"process keeps the state, but a process that continues the session elsewhere gets the state from before this program", err)
}

// deleteStored deletes session (scope, name) from the store, if there is
// one, within SessionStoreTimeout.
func (t *sessions) deleteStored(ctx context.Context, scope, name string) error {
	if t.store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SessionStoreTimeout)
	defer cancel()
	if err := t.store.Delete(ctx, scope, name); err != nil {
		return fmt.Errorf("executor: run_code session %q of scope %q was closed here but could not be deleted from the session store (its saved state stays there, and a call naming the session loads it, until a CloseSession succeeds): %w", name, scope, err)
	}
	return nil
}

// DropSession forgets this process's copy of the run_code session name of
// scope (empty: the deployment) without deleting it from the session store:
// the next call naming it loads the store's state. A host whose other
// processes may have continued the session since calls it before running
// a program in it. A program running in it meanwhile finishes, and the
// state it leaves is neither kept nor saved. It reports whether this
// process had it.
func (e *Executor) DropSession(ctx context.Context, scope, name string) bool {
	if scope == "" {
		scope = deploymentScope
	}
	return e.sessions.close(ctx, scope, name)
}
