package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// scheduler runs the nested calls of one run_code execution
// (docs/architecture.md, "Scheduling of nested calls" and "Settlement"):
//
//   - calls are taken in submission order by one sequencer goroutine, which
//     runs their policy phases one at a time; it takes only the calls handed
//     to it (handOff), and starts with the first one, so a run that makes no
//     call, or whose calls all take the inline path, never starts it;
//   - a concurrency-safe call starts as soon as fewer than maxParallel bodies
//     run; an exclusive call first waits until every earlier call has
//     committed, runs alone, and holds the barrier until it has committed;
//   - each call commits (post-execute, finish, the answer to the program) as
//     soon as its body is done, whatever its siblings do: results reach the
//     program in completion order, and post-execute listeners run one at a
//     time; the goroutine that ran a body commits it, so a call that waits
//     for nothing is never handed over;
//   - at settlement, calls whose body has not started are abandoned, and
//     in-flight ones are awaited;
//   - when the program waits on one call and nothing else is in flight, the
//     runtime's own goroutine runs that call, in the same order (inline.go).
//
// It implements wasmhost.IdleDispatcher.
type scheduler struct {
	e   *Executor
	tok *token
	ctx context.Context // the run_code body's context: nested bodies run under it
	// outlive says the run may be idle-parked (idlepark.go): a call on the
	// inline path runs under ctx too, not under the run's, which ends as
	// the run is suspended while the call goes on.
	outlive bool

	policyCtx    context.Context // cancelled at settlement
	cancelPolicy context.CancelFunc

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []*nested
	settled  bool
	deferred bool // the runtime flushes: Dispatch leaves starting to Flush and Idle
	busy     bool // the sequencer holds a call it has not finished starting
	handed   int  // calls at the head of queue handed to the sequencer, not yet taken
	started  bool // the sequencer goroutine was started (it closes sequenced as it ends)

	inflight int        // calls taken and not committed
	drained  *sync.Cond // on mu: signalled as inflight falls to 1, for an exclusive call

	abandonCh chan struct{} // closed at settlement
	slots     chan struct{} // one token per running concurrency-safe body
	sequenced chan struct{} // closed when the sequencer has stopped
	commits   sync.WaitGroup
	postMu    sync.Mutex // post-execute listeners run one at a time
	answerMu  sync.Mutex // a completion number and its answer to the program, in one step
	completed int64      // on answerMu: completion sequence numbers given out
	watches   watches    // of the contexts bodies run under (watch.go)
	free      []*nested  // on mu: committed records nothing refers to, for the next calls (at most maxFree)
	ids       callIDs    // on mu: the calls' IDs (callids.go)
}

// maxFree is the most committed call records a scheduler keeps for reuse:
// a program awaiting its calls one at a time needs one; a burst of
// parallel calls does not keep its records all for the rest of the run.
const maxFree = 4

// nested is one call a program made: its execution and where its answer
// goes, in one allocation. It is the settler of its body (body.go): the
// goroutine that settles the body commits the call.
type nested struct {
	x     execution
	s     *scheduler
	reply func(wasmhost.CallResult)
	slot  bool // the body holds one of s.slots until it settles
}

func (n *nested) settled() {
	if n.slot {
		<-n.s.slots
	}
	n.s.commit(n)
}

func newScheduler(ctx context.Context, e *Executor, tok *token) *scheduler {
	s := &scheduler{
		e:         e,
		tok:       tok,
		ctx:       ctx,
		abandonCh: make(chan struct{}),
		slots:     make(chan struct{}, e.cfg.maxParallel),
		sequenced: make(chan struct{}),
	}
	s.cond = sync.NewCond(&s.mu)
	s.drained = sync.NewCond(&s.mu)
	s.policyCtx, s.cancelPolicy = context.WithCancel(ctx)
	// A resumed execution (park.go) goes on numbering completions after the
	// calls it made before it parked, which had all completed by then (a
	// run parks only on held calls, and settlement awaits the dispatched
	// ones): its calls' numbers stay unique, as a trace ranks them.
	s.completed = tok.seq.Load()
	return s
}

// handOff hands every queued call to the sequencer, starting it at the
// first. Call it with mu held.
func (s *scheduler) handOff() {
	s.handed = len(s.queue)
	if s.handed == 0 {
		return
	}
	if !s.started {
		s.started = true
		go s.sequence()
		return
	}
	s.cond.Signal()
}

// Dispatch registers a nested call. It never blocks.
func (s *scheduler) Dispatch(name string, args json.RawMessage, reply func(wasmhost.CallResult)) {
	var in *handleArgs
	if t := s.tok.handles.Load(); t != nil { // the run holds handles (handles.go)
		var done bool
		if args, in, done = s.handleDispatch(t, name, args, reply); done {
			return
		}
	}
	s.mu.Lock()
	if s.settled {
		s.mu.Unlock()
		reply(wasmhost.CallResult{Message: "the run_code program has settled: no more tool calls are accepted"})
		return
	}
	id := s.ids.id(s.tok.callID, s.tok.seq.Add(1))
	call := Call{ID: id, Scope: s.tok.scope, Name: name, Args: args} // args is ours (wasmhost.Dispatcher)
	var n *nested
	if k := len(s.free); k > 0 {
		n, s.free = s.free[k-1], s.free[:k-1]
		*n = nested{s: s, reply: reply}
	} else {
		n = &nested{s: s, reply: reply}
	}
	s.e.initExecution(&n.x, call, s.tok)
	n.x.ctxLabel = s.tok.flow.context() // what the program had read when it made the call (flow.go)
	n.x.req.Labels = n.x.ctxLabel
	n.x.handleIn = in
	s.queue = append(s.queue, n)
	if !s.deferred {
		s.handOff()
	}
	s.mu.Unlock()
}

// Flush hands the calls dispatched so far to the sequencer. The runtime
// calls it before the program starts (from then on Dispatch only queues
// calls), and whenever the program pauses without waiting on one call alone.
func (s *scheduler) Flush() {
	s.mu.Lock()
	s.deferred = true
	s.handOff()
	s.mu.Unlock()
}

// take counts a call taken from the queue as in flight until it has
// committed. Call it with mu held.
func (s *scheduler) take() {
	s.inflight++
	s.commits.Add(1)
}

// settle abandons the calls whose body has not started, waits for the
// in-flight ones to commit, and stops the scheduler. Call it once, after the
// program settled.
func (s *scheduler) settle() {
	s.mu.Lock()
	s.settled = true
	if !s.started {
		// Calls still queued are abandoned by the sequencer; with none,
		// there is nothing for it to do.
		s.started = true
		if len(s.queue) > 0 {
			go s.sequence()
		} else {
			close(s.sequenced)
		}
	}
	s.cond.Broadcast()
	s.drained.Broadcast()
	s.mu.Unlock()
	close(s.abandonCh)
	s.cancelPolicy()
	if testHookSettling != nil {
		testHookSettling()
	}
	<-s.sequenced
	s.commits.Wait()
	s.watches.stop()
}

// testHookSettling, when set by a test, runs once settlement has begun and
// before in-flight calls are awaited.
var testHookSettling func()

// next takes the next call handed to the sequencer (once settled, every
// queued call); ok is false once settled and drained. The sequencer is
// busy from the moment it takes a call until it asks for the next one.
func (s *scheduler) next() (n *nested, settled, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	for s.handed == 0 && !s.settled {
		s.cond.Wait()
	}
	if len(s.queue) == 0 {
		return nil, true, false
	}
	n, s.queue = s.queue[0], s.queue[1:]
	s.handed = max(s.handed-1, 0)
	s.take()
	s.busy = true
	return n, s.settled, true
}

func (s *scheduler) isSettled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled
}

// testHookSequencer, when set by a test, runs as each sequencer starts.
var testHookSequencer func()

// sequence is the sequencer goroutine.
func (s *scheduler) sequence() {
	defer close(s.sequenced)
	if testHookSequencer != nil {
		testHookSequencer()
	}
	for {
		n, settled, ok := s.next()
		if !ok {
			return
		}
		if settled {
			s.abandon(n)
			continue
		}
		s.start(n)
	}
}

// start runs n's policy phases and starts its body according to its class.
func (s *scheduler) start(n *nested) {
	x := &n.x
	if !x.prepare(s.policyCtx) {
		if x.askParked != nil {
			s.held(n, parkingOf(s.policyCtx)) // park_approval.go
			return
		}
		if s.isSettled() {
			s.abandon(n)
			return
		}
		s.commit(n)
		return
	}
	if x.def.ConcurrencySafe() {
		select {
		case s.slots <- struct{}{}:
		case <-s.abandonCh:
			s.abandon(n)
			return
		}
		if s.isSettled() {
			<-s.slots
			s.abandon(n)
			return
		}
		n.slot = true
		x.launch(s.ctx, n, s.watches.of(s.ctx))
		return
	}
	// Exclusive: wait for every earlier call to commit, run alone, and hold
	// the barrier through post-execute (the sequencer takes no other call
	// meanwhile).
	if !s.drain() {
		s.abandon(n)
		return
	}
	x.dispatchWatched(s.ctx, s.watches.of(s.ctx))
	s.commit(n)
}

// drain waits until the one call in flight is the sequencer's own, and
// reports false if the program settled first.
func (s *scheduler) drain() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.inflight > 1 && !s.settled {
		s.drained.Wait()
	}
	return !s.settled
}

// abandon settles a call whose body never started.
func (s *scheduler) abandon(n *nested) {
	x := &n.x
	if !x.created {
		x.create(s.ctx) // resolve, so that the tool's finalizer applies
	}
	x.err = &api.Error{Code: api.CodeAbortedBeforeDispatch,
		Message: fmt.Sprintf("%s was abandoned: the program finished before the call started", x.req.Tool)}
	s.commit(n)
}

// commit runs post-execute (one call's listeners at a time) and finish,
// and answers the program. It never waits for another call's commit: a
// call that has no successful value to show the listeners commits at once.
func (s *scheduler) commit(n *nested) {
	defer s.commits.Done()
	if n.x.ran && n.x.err == nil && len(s.e.cfg.post) > 0 {
		s.postMu.Lock()
		n.x.postExecute(s.ctx)
		s.postMu.Unlock()
	}
	// The completion sequence number, the result notification (finish)
	// and the answer to the program are one step, so that the program
	// sees results in the order of their numbers (a trace replays them
	// in that order).
	s.answerMu.Lock()
	s.completed++
	n.x.seq = s.completed
	r := n.x.finish(s.ctx)
	var answer wasmhost.CallResult
	if r.OK() && n.x.def != nil && (n.x.def.Policy().Handle() || (s.e.cfg.handleOver > 0 && len(r.Value) > s.e.cfg.handleOver)) {
		answer = s.handleAnswer(r) // the value stays here; its label joins nothing (handles.go)
	} else {
		s.tok.flow.deliver(r.Tool, r.Labels) // the program has read it from now on (flow.go)
		answer = callResult(r)
	}
	reply := n.reply
	s.mu.Lock()
	// Only an exclusive call waits for this (drain); s.cond must not be
	// signalled here: it would wake the sequencer to take calls the
	// runtime holds for the inline path.
	if s.inflight--; s.inflight <= 1 {
		s.drained.Signal()
	}
	if len(s.free) < maxFree && (!n.x.ran || n.x.life.done()) {
		s.free = append(s.free, n) // n is not read from here on
	}
	s.mu.Unlock()
	reply(answer)
	s.answerMu.Unlock()
}

// callResult is what the program sees of a result: the value, or the
// message and the code (ToolCallError.code); never the cause.
func callResult(r api.Result) wasmhost.CallResult {
	if r.OK() {
		return wasmhost.CallResult{OK: true, Value: r.Value}
	}
	return wasmhost.CallResult{Message: r.Err.Message, Code: r.Err.Code}
}
