package executor

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// Sessions: run_code calls naming one session (Call.Session) in one scope
// share one program state, as the programs of a REPL do: the top-level
// declarations and globalThis properties of one program are there for the
// next (wasmhost.Session). docs/architecture.md, "Sessions", is the
// contract; this file keeps the table of sessions, keyed by scope and name,
// and their limits.

// SessionLimits bound the sessions of an executor (Config.WithSessions). A
// zero field means its default.
type SessionLimits struct {
	// MaxPerScope is how many sessions one scope holds, live or suspended
	// (default DefaultMaxSessionsPerScope). A call naming a new session
	// past it fails with BUSY until one is closed (Executor.CloseSession).
	MaxPerScope int
	// MaxLivePerScope is how many sessions of one scope are held live in
	// memory, each in an instance of its own (default
	// DefaultMaxLiveSessionsPerScope). A session that must become live past
	// it suspends the scope's least recently used idle live session to
	// bytes; when every live one is running a program, the call fails with
	// BUSY.
	MaxLivePerScope int
	// MaxBytes bounds a suspended session's bytes (default
	// DefaultMaxSessionBytes). A session whose state is larger once
	// suspended is reset, and its next call is told so.
	MaxBytes int
	// IdleSuspend is how long a live session stays in memory after its
	// last call ended (default DefaultSessionIdleSuspend); then it is
	// suspended to bytes and its instance released, and its next call
	// restores it.
	IdleSuspend time.Duration
	// Wait is how long a call waits while its session runs another
	// program (default DefaultSessionWait); then it fails with BUSY.
	Wait time.Duration
}

const (
	// DefaultMaxSessionsPerScope is the default of
	// SessionLimits.MaxPerScope: a scope is one agent or conversation,
	// which needs a few sessions at most; 64 suspended sessions of the
	// default MaxBytes are at most 1 GiB, and a typical one (the engine
	// and a few MiB of data) compresses to well under 1 MiB.
	DefaultMaxSessionsPerScope = 64
	// DefaultMaxLiveSessionsPerScope is the default of
	// SessionLimits.MaxLivePerScope: a live session holds its whole linear
	// memory resident (at least the 640 KiB image, copy-on-write), so a
	// scope keeps a handful, as many as a model uses at once.
	DefaultMaxLiveSessionsPerScope = 4
	// DefaultMaxSessionBytes is the default of SessionLimits.MaxBytes:
	// 16 MiB compressed holds tens of MiB of program data (a 2 MiB heap of
	// random doubles takes 2.1 MiB, 16,000 small objects 0.6 MiB).
	DefaultMaxSessionBytes = 16 << 20
	// DefaultSessionIdleSuspend is the default of
	// SessionLimits.IdleSuspend: a model's next call usually comes within
	// one turn (seconds to a minute); past it the session's memory goes
	// back to the sandbox, and resuming costs a few milliseconds.
	DefaultSessionIdleSuspend = 30 * time.Second
	// DefaultSessionWait is the default of SessionLimits.Wait: as long as
	// a typical program runs, so that a model's parallel calls on one
	// session run one after the other instead of failing.
	DefaultSessionWait = time.Minute
)

// WithSessions sets the limits of run_code sessions (Call.Session); zero
// fields keep their defaults. Negative fields make New fail.
func (c Config) WithSessions(l SessionLimits) Config {
	c.sessions = l
	return c
}

func (l SessionLimits) withDefaults() (SessionLimits, error) {
	if l.MaxPerScope < 0 || l.MaxLivePerScope < 0 || l.MaxBytes < 0 || l.IdleSuspend < 0 || l.Wait < 0 {
		return l, fmt.Errorf("executor: negative session limits %+v (0 means the default)", l)
	}
	if l.MaxPerScope == 0 {
		l.MaxPerScope = DefaultMaxSessionsPerScope
	}
	if l.MaxLivePerScope == 0 {
		l.MaxLivePerScope = DefaultMaxLiveSessionsPerScope
	}
	l.MaxLivePerScope = min(l.MaxLivePerScope, l.MaxPerScope)
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxSessionBytes
	}
	if l.IdleSuspend == 0 {
		l.IdleSuspend = DefaultSessionIdleSuspend
	}
	if l.Wait == 0 {
		l.Wait = DefaultSessionWait
	}
	return l, nil
}

// SessionInfo describes one session (Executor.Sessions).
type SessionInfo struct {
	Name  string
	State wasmhost.SessionState
	// Bytes is the size of its state: suspended, its bytes; live, its
	// instance's memory.
	Bytes    int
	LastUsed time.Time
}

// sessionRuntime is a CodeRuntime that keeps sessions: *wasmhost.Runtime.
type sessionRuntime interface {
	NewSession(ctx context.Context) (*wasmhost.Session, error)
}

// sessions is an executor's table of sessions. It is safe for concurrent
// use.
type sessions struct {
	limits SessionLimits
	store  SessionStore // session_store.go; nil keeps sessions in this process only

	mu     sync.Mutex
	scopes map[string]map[string]*session
}

// session is one entry of the table. Holding its turn (a token in turn)
// is running a program in it, or suspending it.
type session struct {
	scope, name string
	ws          *wasmhost.Session
	turn        chan struct{}
	saving      sync.Mutex // orders a save to the store against a close (session_store.go)
	// flow is the session's context label and its sources: each program
	// starts with it, and it takes each program's back (only up: flow.go).
	// Under the session's turn.
	flow flow
	// handles are the handles its programs received (handles.go): each
	// program's token holds this table, and a program that received the
	// session's first one leaves its table here. Nil for none. Under the
	// session's turn.
	handles *handleTable

	// Under sessions.mu.
	live     bool // held live in memory, or about to be (counts toward MaxLivePerScope)
	lastUsed time.Time
	idle     *time.Timer
	closed   bool
	notice   string // why its state was dropped between calls, for its next call
}

// acquire returns the session (scope, name), made when new, with its turn
// taken: the caller runs its program and then calls release. It waits
// while the session runs another program, at most the Wait limit.
func (t *sessions) acquire(ctx context.Context, rt sessionRuntime, scope, name string, lang api.Language) (*session, error) {
	s, err := t.entry(ctx, rt, scope, name, lang)
	if err != nil {
		return nil, err
	}
	select {
	case s.turn <- struct{}{}: // free: the usual case, without a timer
	default:
		if err := t.waitTurn(ctx, s); err != nil {
			return nil, err
		}
	}
	t.mu.Lock()
	if s.closed {
		t.mu.Unlock()
		<-s.turn
		return nil, &api.Error{Code: api.CodeAborted, Message: fmt.Sprintf("session %q was closed while this call waited for it; nothing ran", name)}
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	wasLive := s.live
	s.live = true
	var victim *session
	room := true
	if !wasLive {
		victim, room = t.victimLocked(s)
	}
	t.mu.Unlock()
	if !room {
		t.mu.Lock()
		s.live = false
		t.mu.Unlock()
		<-s.turn
		return nil, &api.Error{Code: api.CodeBusy, Message: fmt.Sprintf(
			"run_code could not start: scope %q already has %d sessions live, all running a program (the limit is %d); nothing ran, retry later",
			scope, t.limits.MaxLivePerScope, t.limits.MaxLivePerScope)}
	}
	if victim != nil {
		t.suspend(victim, "it was the least recently used of its scope's live sessions")
		<-victim.turn
	}
	return s, nil
}

// waitTurn takes the turn of s, which runs another program, waiting at
// most the Wait limit.
func (t *sessions) waitTurn(ctx context.Context, s *session) error {
	wait := time.NewTimer(t.limits.Wait)
	defer wait.Stop()
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &api.Error{Code: api.CodeAborted, Cause: ctx.Err(),
			Message: fmt.Sprintf("run_code was cancelled while it waited for session %q, which was running another program", s.name)}
	case <-wait.C:
		return &api.Error{Code: api.CodeBusy, Cause: wasmhost.ErrSessionBusy, Message: fmt.Sprintf(
			"run_code could not start: session %q was running another program for the %v this call may wait; nothing ran, retry later",
			s.name, t.limits.Wait)}
	}
}

// victimLocked makes room for s among its scope's live sessions: nil when
// there is room, else the least recently used idle live session, its turn
// taken (the caller suspends it); false when every live one is running.
// Under t.mu.
func (t *sessions) victimLocked(s *session) (*session, bool) {
	var live []*session
	for _, o := range t.scopes[s.scope] {
		if o != s && o.live {
			live = append(live, o)
		}
	}
	if len(live) < t.limits.MaxLivePerScope {
		return nil, true
	}
	sort.Slice(live, func(i, j int) bool { return live[i].lastUsed.Before(live[j].lastUsed) })
	for _, o := range live {
		select {
		case o.turn <- struct{}{}:
			return o, true
		default:
		}
	}
	return nil, false
}

// entry returns the session (scope, name), making it when new: loaded
// from the session store when there is one (session_store.go), which it
// does without holding the table; lang is the language of the program
// that asks for it.
func (t *sessions) entry(ctx context.Context, rt sessionRuntime, scope, name string, lang api.Language) (*session, error) {
	t.mu.Lock()
	s, err := t.lookupLocked(scope, name)
	t.mu.Unlock()
	if s != nil || err != nil {
		return s, err
	}
	var head sessionHead
	ws, notice, err := t.open(ctx, rt, scope, name, lang, &head)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, err = t.lookupLocked(scope, name); s != nil || err != nil {
		ws.Close(ctx) // another call made it meanwhile, or filled the scope
		return s, err
	}
	if t.scopes == nil {
		t.scopes = make(map[string]map[string]*session)
	}
	byName := t.scopes[scope]
	if byName == nil {
		byName = make(map[string]*session)
		t.scopes[scope] = byName
	}
	s = &session{scope: scope, name: name, ws: ws, turn: make(chan struct{}, 1), lastUsed: time.Now(), notice: notice}
	s.flow.label.Store(pack(head.label))
	s.handles = heldTable("session", head.handles)
	byName[name] = s
	return s, nil
}

// lookupLocked returns the session (scope, name), or nil when there is
// none and room for it, or the error of a full scope. Under t.mu.
func (t *sessions) lookupLocked(scope, name string) (*session, error) {
	byName := t.scopes[scope]
	if s := byName[name]; s != nil {
		return s, nil
	}
	if len(byName) >= t.limits.MaxPerScope {
		return nil, &api.Error{Code: api.CodeBusy, Message: fmt.Sprintf(
			"run_code could not start session %q: scope %q already has %d sessions (the limit); close one or use one of them",
			name, scope, t.limits.MaxPerScope)}
	}
	return nil, nil
}

// release ends the caller's turn of s: its state, suspended by the
// runtime meanwhile, is checked against MaxBytes, and the idle timer is
// armed.
func (t *sessions) release(s *session) {
	state := s.ws.State()
	if state == wasmhost.SessionSuspended {
		t.checkBytes(s, s.ws.Bytes())
	}
	t.mu.Lock()
	s.lastUsed = time.Now()
	s.live = state == wasmhost.SessionLive
	if s.live && !s.closed {
		if s.idle == nil {
			s.idle = time.AfterFunc(t.limits.IdleSuspend, func() { t.idleSuspend(s) })
		} else {
			s.idle.Reset(t.limits.IdleSuspend)
		}
	}
	t.mu.Unlock()
	<-s.turn
}

// idleSuspend suspends s after IdleSuspend without a call, unless a call
// holds it now (its release re-arms the timer).
func (t *sessions) idleSuspend(s *session) {
	select {
	case s.turn <- struct{}{}:
	default:
		return
	}
	defer func() { <-s.turn }()
	t.mu.Lock()
	closed := s.closed
	t.mu.Unlock()
	if !closed {
		t.suspend(s, fmt.Sprintf("it was idle for %v", t.limits.IdleSuspend))
	}
}

// suspend suspends s to bytes, its turn held by the caller.
func (t *sessions) suspend(s *session, why string) {
	// Timer-driven or on another session's behalf: no caller's context
	// applies, and suspending does not wait on anything.
	n, err := s.ws.Suspend(context.Background())
	t.mu.Lock()
	s.live = false
	if err != nil {
		s.notice = fmt.Sprintf("the session's state was reset before this program: it was being suspended to bytes (%s) and that failed: %v", why, err)
	}
	t.mu.Unlock()
	if err == nil {
		t.checkBytes(s, n)
	}
}

// checkBytes resets s when its suspended state is over MaxBytes.
func (t *sessions) checkBytes(s *session, n int) {
	if n <= t.limits.MaxBytes {
		return
	}
	s.ws.Reset(context.Background())
	t.mu.Lock()
	s.notice = fmt.Sprintf("the session's state was reset before this program: suspended, it took %d bytes, "+
		"over the limit of %d bytes a session may keep; keep less data in globals", n, t.limits.MaxBytes)
	t.mu.Unlock()
}

// takeNotice returns, once, why the state of s was dropped since its last
// call, or "".
func (t *sessions) takeNotice(s *session) string {
	t.mu.Lock()
	n := s.notice
	s.notice = ""
	t.mu.Unlock()
	if w := s.ws.Notice(); w != "" {
		n = w
	}
	return n
}

// close removes the session (scope, name) from this process, dropping
// its state; a program running in it finishes, its state is neither kept
// nor saved to the store, and a call waiting for it fails.
func (t *sessions) close(ctx context.Context, scope, name string) bool {
	t.mu.Lock()
	s := t.scopes[scope][name]
	if s == nil {
		t.mu.Unlock()
		return false
	}
	delete(t.scopes[scope], name)
	if len(t.scopes[scope]) == 0 {
		delete(t.scopes, scope)
	}
	s.closed = true
	if s.idle != nil {
		s.idle.Stop()
	}
	t.mu.Unlock()
	s.ws.Close(ctx)
	// Wait for a save under way (session_store.go): later ones see closed.
	s.saving.Lock()
	s.saving.Unlock()
	return true
}

// list describes the sessions of scope, by name.
func (t *sessions) list(scope string) []SessionInfo {
	t.mu.Lock()
	var out []SessionInfo
	var ws []*wasmhost.Session
	for _, s := range t.scopes[scope] {
		out = append(out, SessionInfo{Name: s.name, LastUsed: s.lastUsed})
		ws = append(ws, s.ws)
	}
	t.mu.Unlock()
	for i, w := range ws {
		out[i].State, out[i].Bytes = w.State(), w.Bytes()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CloseSession closes the run_code session name of scope (empty scope:
// the deployment): its state is dropped, a program running in it
// finishes first, and a call waiting for it fails with ABORTED. With a
// session store (Config.WithSessionStore) it is deleted from the store
// too. The next call naming it starts a new session. It reports whether
// this process had it, and the store's error when the store's copy could
// not be deleted: this process's state is dropped all the same, but the
// store's copy stays, and the next call naming the session loads it, until
// a CloseSession that succeeds (or a Save replacing it).
func (e *Executor) CloseSession(ctx context.Context, scope, name string) (had bool, err error) {
	if scope == "" {
		scope = deploymentScope
	}
	had = e.sessions.close(ctx, scope, name)
	return had, e.sessions.deleteStored(ctx, scope, name)
}

// Sessions describes the run_code sessions of scope (empty: the
// deployment), sorted by name.
func (e *Executor) Sessions(scope string) []SessionInfo {
	if scope == "" {
		scope = deploymentScope
	}
	return e.sessions.list(scope)
}

// SectionSession is the name of the prompt section that says run_code
// programs share their state (SessionPrompt).
const SectionSession = "tools:session"

// SessionPrompt tells a model that its run_code programs share one state.
// A host whose run_code calls name a session (Call.Session) puts it where
// the model reads run_code's rules: ptcx mcp --session appends it to
// run_code's description, the ptcx front door (ptcx.WithSessions) to the
// description and to Host.Prompt.
const SessionPrompt = "State persists between run_code calls, as in a REPL: the top-level declarations " +
	"(const, let, var, function, class) and globalThis properties of one program are there for the next " +
	"(declaring a name again shadows it); in Python, the module's globals (variables, functions, classes, imports). " +
	"Keep data you will need in them instead of fetching it again. " +
	"The return value, logs, limits and tools are each call's own. A program that throws keeps what ran before " +
	"the throw; one stopped by a limit (time, memory, output) resets the state, and its result says so. " +
	"Await every call before the program ends: calls still pending are abandoned.\n"

// WithSessionPrompt returns a run_code describer that appends
// SessionPrompt to what describe renders (nil: the base description).
func WithSessionPrompt(describe registry.Describer) registry.Describer {
	return func(scope, base string, bindable []api.Schema) string {
		d := base
		if describe != nil {
			d = describe(scope, base, bindable)
		}
		return d + "\n\n" + SessionPrompt
	}
}
