package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/store"
)

// Program-state sessions: an execution with keep_state runs its program
// in the state its session's earlier programs left (executor.Call.Session),
// on whichever node it is posted to (docs/service.md, "Sessions";
// docs/cluster.md, "Sessions"). A session's record (store.SessionRecord)
// says which node runs a program in it now and names its latest saved
// state in the snapshot store; a node claims the record before it runs a
// program and gives it back after, so that programs of one session run one
// at a time across the cluster and each starts from the state the one
// before saved. The executor's SessionStore (sessionStore, below) loads and
// saves that state under the claim. Without a store shared beyond this
// process the same code runs on a store.Memory of the node's own.

// DefaultSessionWait is the default of tenants[].sessions.wait_ms: as long
// as a typical program runs, within the default server.max_wait_ms.
const DefaultSessionWait = 30 * time.Second

// DefaultSessionTTL is the default of tenants[].sessions.ttl_ms: a
// conversation's programs come within a day.
const DefaultSessionTTL = 24 * time.Hour

// DefaultMaxStateSessions is the default of tenants[].sessions.max_sessions:
// the session records a tenant may have in the store at once.
const DefaultMaxStateSessions = 1000

// sessionPoll is how often a keep_state execution looks again at a
// session another node is running a program in.
const sessionPoll = 100 * time.Millisecond

// sessionTenant is a tenant's session settings (tenants[].sessions).
type sessionTenant struct {
	wait, ttl time.Duration
	max       int // session records in the store at once
}

// withProgramSessions gives t's executors sessions within tc's limits,
// their state kept in the Server's store (sessionStore).
func withProgramSessions(t *tenant, tc TenantConfig, cfg executor.Config) executor.Config {
	q := tc.Sessions
	t.state = sessionTenant{wait: ms(q.WaitMS, DefaultSessionWait), ttl: ms(q.TTLMS, DefaultSessionTTL), max: DefaultMaxStateSessions}
	if q.MaxSessions > 0 {
		t.state.max = int(q.MaxSessions)
	}
	// The main executor holds maxHeldSessions between programs, and at
	// most one more per execution in flight.
	return cfg.WithSessions(executor.SessionLimits{
		MaxPerScope: maxHeldSessions + t.quota.Limits().MaxConcurrent, MaxBytes: int(q.MaxBytes), IdleSuspend: ms(q.IdleSuspendMS, 0), Wait: t.state.wait,
	}).WithSessionStore(sessionStore{})
}

// programSessions are a Server's program-state sessions.
type programSessions struct {
	st   store.Store
	node string
	// alive reports whether node (another one) still holds its lease: a
	// session it runs a program in is taken over once it does not.
	alive func(ctx context.Context, node string) (bool, error)
	log   *slog.Logger
	// draining reports whether the server drains (SIGTERM): a wait cut
	// short then answers DRAINING.
	draining func() bool

	mu    sync.Mutex
	turns map[string]*sessionTurn // per session key with a local claim, waiting or held, or a held session
	held  map[string]heldSession  // per session key: what a tenant's main executor holds live
}

// heldSession is a session a tenant's main executor (tenant.exec) holds
// live between programs: the saved state it matches, and its last use.
type heldSession struct {
	t           *tenant
	scope, name string
	snapshot    string
	used        time.Time
}

// maxHeldSessions bounds the sessions a tenant's main executor holds live
// between programs (its executor.SessionLimits.MaxPerScope); past it, the
// least recently used idle one is dropped there (its state stays in the
// store).
const maxHeldSessions = executor.DefaultMaxSessionsPerScope

func newProgramSessions(s *Server) *programSessions {
	ps := &programSessions{node: s.cfg.node(), log: s.log, draining: s.draining.Load,
		turns: map[string]*sessionTurn{}, held: map[string]heldSession{}}
	if s.cluster != nil {
		ps.st, ps.node, ps.alive = s.cluster.Store, s.cluster.Node, s.cluster.LeaseAlive
	} else {
		ps.st = store.NewMemory()
		ps.alive = func(context.Context, string) (bool, error) { return false, nil }
	}
	return ps
}

// sessionKeyOf is the key of a session's record: the tenant's and the
// session's hashes (a store key's alphabet is narrower than a session
// name's, and neither may reveal the other tenant's names).
func sessionKeyOf(tenant, scope, name string) string {
	n := sha256.Sum256([]byte(tenant + "\x00" + scope + "\x00" + name))
	return sessionPrefixOf(tenant) + hex.EncodeToString(n[:16])
}

// sessionPrefixOf is the prefix of every key of tenant's session records
// (store.Sessions.CountSessions).
func sessionPrefixOf(tenant string) string {
	t := sha256.Sum256([]byte(tenant))
	return hex.EncodeToString(t[:8]) + "."
}

// sessionOp is what claims a session: a keep_state execution, which
// creates the session's record if there is none, or a DELETE, which
// does not.
type sessionOp int

const (
	opRun sessionOp = iota
	opDelete
)

// sessionClaim is a node's claim on a session while it runs a program in
// it: the record as this node last wrote it.
type sessionClaim struct {
	ps   *programSessions
	t    *tenant
	turn chan struct{}
	once sync.Once // release or abandon
	// key, scope and name are the session claimed, as the request named it:
	// what its saved state must say it is (session_bytes.go), whatever
	// the record read from the store says.
	key, scope, name string

	mu  sync.Mutex
	rec store.SessionRecord
	// lost means another node took the session over (this node's lease
	// lapsed meanwhile): this claim writes nothing more.
	lost bool
}

type claimKey struct{}

func withClaim(ctx context.Context, c *sessionClaim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

func claimOf(ctx context.Context) *sessionClaim {
	c, _ := ctx.Value(claimKey{}).(*sessionClaim)
	return c
}

// claim takes session (scope, name) of t for a program of this node,
// waiting (at most the tenant's session wait) while a program runs in it
// here or on another live node; a session whose running node's lease
// expired is taken over (its program is lost; its state is the last one
// saved).
func (ps *programSessions) claim(ctx context.Context, t *tenant, scope, name string) (*sessionClaim, *httpError) {
	return ps.claimAs(ctx, opRun, t, scope, name)
}

// claimAs is claim for op: opDelete creates no record, and returns a nil
// claim (its turn given back) when there is none.
func (ps *programSessions) claimAs(ctx context.Context, op sessionOp, t *tenant, scope, name string) (*sessionClaim, *httpError) {
	key := sessionKeyOf(t.name, scope, name)
	deadline := time.Now().Add(t.state.wait)
	turn := ps.turn(key)
	wait := time.NewTimer(t.state.wait)
	defer wait.Stop()
	select {
	case turn <- struct{}{}:
	case <-wait.C:
		ps.releaseTurn(key)
		return nil, ps.busy(op, name, ps.node, t.state.wait)
	case <-ctx.Done():
		ps.releaseTurn(key)
		return nil, ps.waitEnded(op, name)
	}
	c, herr := ps.claimRecord(ctx, op, t, key, scope, name, deadline)
	if herr != nil || c == nil {
		<-turn
		ps.releaseTurn(key)
		return nil, herr
	}
	c.turn = turn
	return c, nil
}

// claimRecord claims the session's record for this node, its local turn
// held.
func (ps *programSessions) claimRecord(ctx context.Context, op sessionOp, t *tenant, key, scope, name string, deadline time.Time) (*sessionClaim, *httpError) {
	for {
		sctx, cancel := context.WithTimeout(ctx, cluster.StoreTimeout)
		rec, err := ps.st.GetSession(sctx, key)
		var rev uint64
		switch {
		case errors.Is(err, store.ErrNotFound) && op == opDelete:
			cancel()
			return nil, nil
		case errors.Is(err, store.ErrNotFound):
			var n int
			if n, err = ps.st.CountSessions(sctx, sessionPrefixOf(t.name)); err != nil {
				break
			}
			if n >= t.state.max {
				cancel()
				return nil, quotaError(ReasonMaxStateSessions,
					"tenant %s has %d sessions with kept state, its maximum (tenants[].sessions.max_sessions); end one (DELETE /v1/sessions/{name}) or let one expire (tenants[].sessions.ttl_ms), then retry",
					t.name, n)
			}
			rec = store.SessionRecord{Key: key, Tenant: t.name, Scope: scope, Name: name}
			rec.Running, rec.ExpiresAt = ps.node, time.Now().Add(t.state.ttl)
			rev, err = ps.st.CreateSession(sctx, rec)
			if errors.Is(err, store.ErrExists) {
				cancel()
				continue // another node created it first: look again
			}
		case err != nil:
		default:
			var free bool
			if free, err = ps.free(sctx, rec); err == nil && free {
				// The record's own names are rewritten as the key says they
				// are: only its snapshot is taken from it, and checked.
				rec.Key, rec.Tenant, rec.Scope, rec.Name = key, t.name, scope, name
				rec.Running, rec.ExpiresAt = ps.node, time.Now().Add(t.state.ttl)
				rev, err = ps.st.UpdateSession(sctx, rec)
				if errors.Is(err, store.ErrConflict) {
					cancel()
					continue // another node claimed it first: look again
				}
			} else if err == nil {
				cancel()
				if time.Now().After(deadline) {
					return nil, ps.busy(op, name, rec.Running, t.state.wait)
				}
				select {
				case <-time.After(sessionPoll):
				case <-ctx.Done():
					return nil, ps.waitEnded(op, name)
				}
				continue
			}
		}
		cancel()
		if err != nil {
			nothing := "nothing ran"
			if op == opDelete {
				nothing = "nothing was deleted"
			}
			e := errorf(CodeStoreUnavailable, "session %q could not be claimed in the store: %v; %s, retry later", name, err, nothing)
			e.RetryAfter = DefaultRetryAfter
			return nil, e
		}
		rec.Revision = rev
		return &sessionClaim{ps: ps, t: t, rec: rec, key: key, scope: scope, name: name}, nil
	}
}

// free reports whether rec may be claimed: no program runs in it, or the
// node running one is this one (its earlier life: this node's turn is
// held) or has lost its lease.
func (ps *programSessions) free(ctx context.Context, rec store.SessionRecord) (bool, error) {
	if rec.Running == "" || rec.Running == ps.node {
		return true, nil
	}
	alive, err := ps.alive(ctx, rec.Running)
	return !alive, err
}

func (ps *programSessions) busy(op sessionOp, name, node string, wait time.Duration) *httpError {
	waiter, nothing := "a keep_state execution", "nothing ran"
	if op == opDelete {
		waiter, nothing = "its DELETE", "nothing was deleted"
	}
	e := errorf(CodeConflict,
		"session %q is running another program (on node %s), which did not end within the %v %s waits (tenants[].sessions.wait_ms); %s, retry once it ends",
		name, node, wait, waiter, nothing)
	e.RetryAfter = DefaultRetryAfter
	return e
}

// waitEnded answers a request whose context ended while it waited for
// session name to be free: DRAINING when the server drains, else the
// conflict that made it wait (nobody reads it when its client went away).
func (ps *programSessions) waitEnded(op sessionOp, name string) *httpError {
	nothing := "nothing ran"
	if op == opDelete {
		nothing = "nothing was deleted"
	}
	if ps.draining != nil && ps.draining() {
		return errorf(CodeDraining, "the server is draining (shutting down) while the request waited for session %q; %s, retry on another instance", name, nothing)
	}
	e := errorf(CodeConflict, "the request ended while it waited for session %q, which runs another program; %s", name, nothing)
	e.RetryAfter = DefaultRetryAfter
	return e
}

// sessionTurn is a session's local turn: held (a token in ch) by the
// local execution claiming or running it, or by hold while it drops the
// session. An entry goes once no claim refers to it and the session is
// not held, so the map is bounded by the claims in flight plus the held
// sessions.
type sessionTurn struct {
	ch   chan struct{}
	refs int // claims waiting for or holding ch
}

// turn returns the local turn of session key, counting the caller's
// reference until releaseTurn.
func (ps *programSessions) turn(key string) chan struct{} {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	e := ps.turns[key]
	if e == nil {
		e = &sessionTurn{ch: make(chan struct{}, 1)}
		ps.turns[key] = e
	}
	e.refs++
	return e.ch
}

// releaseTurn drops the caller's reference to the turn of session key.
func (ps *programSessions) releaseTurn(key string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.forgetLocked(key, 1)
}

// forgetLocked drops n references to the turn of key, and the entry with
// the last unless the session is held. Under ps.mu.
func (ps *programSessions) forgetLocked(key string, n int) {
	e := ps.turns[key]
	if e == nil {
		return
	}
	e.refs -= n
	if _, held := ps.held[key]; e.refs <= 0 && !held {
		delete(ps.turns, key)
	}
}

// prepare readies ex, the executor about to run the claimed session's
// program: the tenant's main executor drops its live copy unless it is
// the state the record names (another node, or another of this node's
// executors, ran a program in it since).
func (c *sessionClaim) prepare(ctx context.Context, ex *executor.Executor) {
	if ex != c.t.exec {
		return
	}
	c.ps.mu.Lock()
	h, ok := c.ps.held[c.rec.Key]
	c.ps.mu.Unlock()
	if ok && (h.snapshot != c.rec.Snapshot || c.rec.LastNode != c.ps.node) {
		ex.DropSession(ctx, c.rec.Scope, c.rec.Name)
	}
}

// release ends the claim after the program ran in ex: the record says no
// program runs in the session, and the executor's live copy is kept (the
// tenant's main executor, within maxHeldSessions) or dropped (an
// execution's own executor, which goes). Only the first release or
// abandon of a claim does anything.
func (c *sessionClaim) release(ctx context.Context, ex *executor.Executor) {
	c.once.Do(func() { c.end(context.WithoutCancel(ctx), ex) })
}

// abandon ends a claim whose program did not run (nil: no claim).
func (c *sessionClaim) abandon() {
	if c != nil {
		c.once.Do(func() { c.end(context.Background(), nil) })
	}
}

func (c *sessionClaim) end(ctx context.Context, ex *executor.Executor) {
	c.mu.Lock()
	rec, lost := c.rec, c.lost
	c.mu.Unlock()
	if !lost {
		rec.Running = ""
		sctx, cancel := context.WithTimeout(ctx, cluster.StoreTimeout)
		if _, err := c.ps.st.UpdateSession(sctx, rec); err != nil && !errors.Is(err, store.ErrConflict) {
			c.ps.log.Warn("a session's record could not be released: another node takes it over once this node's lease lapses",
				"tenant", c.t.name, "session", rec.Name, "error", err.Error())
		}
		cancel()
	}
	switch {
	case ex == nil:
	case ex == c.t.exec:
		c.ps.hold(ctx, c.t, rec)
	default:
		ex.DropSession(ctx, rec.Scope, rec.Name)
	}
	<-c.turn
	c.ps.releaseTurn(rec.Key)
}

// hold notes that t's main executor holds session rec live, and drops the
// least recently used idle ones past maxHeldSessions.
func (ps *programSessions) hold(ctx context.Context, t *tenant, rec store.SessionRecord) {
	ps.mu.Lock()
	ps.held[rec.Key] = heldSession{t: t, scope: rec.Scope, name: rec.Name, snapshot: rec.Snapshot, used: time.Now()}
	var mine []string
	for k, h := range ps.held {
		if h.t == t {
			mine = append(mine, k)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return ps.held[mine[i]].used.Before(ps.held[mine[j]].used) })
	var drop []heldSession
	var turns []chan struct{}
	for _, k := range mine {
		if len(mine)-len(drop) <= maxHeldSessions {
			break
		}
		select {
		case ps.turns[k].ch <- struct{}{}: // idle: no local program runs in it, and none starts until it is dropped
			drop = append(drop, ps.held[k])
			turns = append(turns, ps.turns[k].ch)
			delete(ps.held, k)
		default:
		}
	}
	ps.mu.Unlock()
	for i, h := range drop {
		t.exec.DropSession(ctx, h.scope, h.name)
		<-turns[i]
	}
	ps.mu.Lock()
	for _, h := range drop {
		ps.forgetLocked(sessionKeyOf(t.name, h.scope, h.name), 0)
	}
	ps.mu.Unlock()
}

// remove ends session (scope, name) of t (DELETE /v1/sessions/{name}):
// it claims the session as a program would (waiting while one runs in
// it), deletes its record and then its saved state (when the object's
// name is the session's own: deleteOwn), and drops this node's live copy. Another node holding a live copy drops it at the
// session's next program there (prepare: the record it finds is new). It
// reports whether the session's record existed.
func (ps *programSessions) remove(ctx context.Context, t *tenant, scope, name string) (bool, *httpError) {
	c, herr := ps.claimAs(ctx, opDelete, t, scope, name)
	if herr != nil {
		return false, herr
	}
	key := sessionKeyOf(t.name, scope, name)
	if c == nil { // no record; a live copy here is stale: drop it
		if turn, ok := ps.idleTurn(key); ok {
			ps.drop(ctx, t, key, scope, name)
			<-turn
			ps.releaseTurn(key)
		}
		return false, nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cluster.StoreTimeout)
	defer cancel()
	if err := ps.st.DeleteSession(sctx, key); err != nil {
		c.abandon()
		return false, unavailable(CodeStoreUnavailable, "session %q could not be deleted from the store: %v; it is unchanged, retry later", name, err)
	}
	c.deleteOwn(sctx, c.rec.Snapshot)
	ps.drop(ctx, t, key, scope, name)
	<-c.turn
	ps.releaseTurn(key)
	return true, nil
}

// idleTurn takes the local turn of session key if no local claim waits
// for or holds it (the caller gives it back: <-turn, releaseTurn).
func (ps *programSessions) idleTurn(key string) (chan struct{}, bool) {
	turn := ps.turn(key)
	select {
	case turn <- struct{}{}:
		return turn, true
	default:
		ps.releaseTurn(key)
		return nil, false
	}
}

// drop drops t's main executor's live copy of session key, its local
// turn held.
func (ps *programSessions) drop(ctx context.Context, t *tenant, key, scope, name string) {
	t.exec.DropSession(context.WithoutCancel(ctx), scope, name)
	ps.mu.Lock()
	delete(ps.held, key)
	ps.mu.Unlock()
}
