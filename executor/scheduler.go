package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// scheduler runs the nested calls of one run_code execution
// (docs/architecture.md, "Scheduling of nested calls" and "Settlement"):
//
//   - calls are taken in submission order by one sequencer goroutine, which
//     runs their policy phases one at a time;
//   - a concurrency-safe call starts as soon as fewer than maxParallel bodies
//     run; an exclusive call first waits until every earlier call has
//     committed, runs alone, and holds the barrier until it has committed;
//   - each call commits (post-execute, finish, the answer to the program)
//     after the call before it, so commits follow submission order whatever
//     order bodies finish in; the goroutine that ran a body commits it, so a
//     call that waits for nothing is never handed over;
//   - at settlement, calls whose body has not started are abandoned, and
//     in-flight ones are awaited;
//   - when the program waits on one call and nothing else is in flight, the
//     runtime's own goroutine runs that call (Idle), in the same order.
//
// It implements wasmhost.IdleDispatcher.
type scheduler struct {
	e   *Executor
	tok *token
	ctx context.Context // the run_code body's context: nested bodies run under it

	policyCtx    context.Context // cancelled at settlement
	cancelPolicy context.CancelFunc

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []*nested
	settled  bool
	deferred bool // the runtime flushes: Dispatch leaves starting to Flush and Idle
	busy     bool // the sequencer holds a call it has not finished starting

	abandonCh chan struct{} // closed at settlement
	slots     chan struct{} // one token per running concurrency-safe body
	last      *nested       // the last call in commit order (guarded by mu)
	sequenced chan struct{} // closed when the sequencer has stopped
	commits   sync.WaitGroup
}

// nested is one call a program made.
type nested struct {
	x         *execution
	reply     func(wasmhost.CallResult)
	prev      *nested       // the call that commits before it
	committed chan struct{} // closed once it has committed
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
	s.policyCtx, s.cancelPolicy = context.WithCancel(ctx)
	go s.sequence()
	return s
}

// Dispatch registers a nested call. It never blocks.
func (s *scheduler) Dispatch(name string, args json.RawMessage, reply func(wasmhost.CallResult)) {
	s.mu.Lock()
	if s.settled {
		s.mu.Unlock()
		reply(wasmhost.CallResult{Message: "the run_code program has settled: no more tool calls are accepted"})
		return
	}
	id := s.tok.callID + ":ptc:" + strconv.FormatInt(s.tok.seq.Add(1), 10)
	call := Call{ID: id, Scope: s.tok.scope, Name: name, Args: args} // args is ours (wasmhost.Dispatcher)
	s.queue = append(s.queue, &nested{
		x:         s.e.newExecution(call, s.tok),
		reply:     reply,
		committed: make(chan struct{}),
	})
	if !s.deferred {
		s.cond.Signal()
	}
	s.mu.Unlock()
}

// Flush hands the calls dispatched so far to the sequencer. The runtime
// calls it before the program starts (from then on Dispatch only queues
// calls), and whenever the program pauses without waiting on one call alone.
func (s *scheduler) Flush() {
	s.mu.Lock()
	s.deferred = true
	if len(s.queue) > 0 {
		s.cond.Signal()
	}
	s.mu.Unlock()
}

// Idle runs the one call the program waits on, on the runtime's goroutine,
// when nothing else is in flight: every earlier call has committed and the
// sequencer holds none. That spares the hand-offs to the sequencer and to a body
// goroutine and back, which cost more than everything else in an awaited
// call. The call goes through the same phases in the same order; only its
// goroutine differs. Otherwise Idle flushes.
//
// A body that ignores its context is given cancelGrace, as anywhere; then
// the call settles without it and handover lets the program go on while
// this goroutine stays stuck in the body.
func (s *scheduler) Idle(ctx context.Context, handover func()) {
	s.mu.Lock()
	s.deferred = true
	if len(s.queue) != 1 || s.busy || s.settled || !s.lastCommitted() {
		if len(s.queue) > 0 {
			s.cond.Signal()
		}
		s.mu.Unlock()
		return
	}
	n := s.queue[0]
	s.queue = s.queue[:0]
	s.link(n)
	s.mu.Unlock()
	if testHookInline != nil {
		testHookInline(n.x.req)
	}
	if !n.x.prepare(ctx) {
		s.commit(n)
		return
	}
	n.x.runHere(ctx, func() { s.commit(n) }, handover)
}

// testHookInline, when set by a test, sees every call Idle runs.
var testHookInline func(Request)

// lastCommitted reports whether every call taken so far has committed.
func (s *scheduler) lastCommitted() bool {
	if s.last == nil {
		return true
	}
	select {
	case <-s.last.committed:
		return true
	default:
		return false
	}
}

// link appends n to the commit chain.
func (s *scheduler) link(n *nested) {
	n.prev, s.last = s.last, n
	s.commits.Add(1)
}

// settle abandons the calls whose body has not started, waits for the
// in-flight ones to commit, and stops the scheduler. Call it once, after the
// program settled.
func (s *scheduler) settle() {
	s.mu.Lock()
	s.settled = true
	s.cond.Broadcast()
	s.mu.Unlock()
	close(s.abandonCh)
	s.cancelPolicy()
	if testHookSettling != nil {
		testHookSettling()
	}
	<-s.sequenced
	s.commits.Wait()
}

// testHookSettling, when set by a test, runs once settlement has begun and
// before in-flight calls are awaited.
var testHookSettling func()

// next takes the next submitted call and links it into the commit chain;
// ok is false once settled and drained. The sequencer is busy from the
// moment it takes a call until it asks for the next one.
func (s *scheduler) next() (n *nested, settled, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	for len(s.queue) == 0 && !s.settled {
		s.cond.Wait()
	}
	if len(s.queue) == 0 {
		return nil, true, false
	}
	n, s.queue = s.queue[0], s.queue[1:]
	s.link(n)
	s.busy = true
	return n, s.settled, true
}

func (s *scheduler) isSettled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled
}

// sequence is the sequencer goroutine.
func (s *scheduler) sequence() {
	defer close(s.sequenced)
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
	x := n.x
	if !x.prepare(s.policyCtx) {
		if s.isSettled() {
			s.abandon(n)
			return
		}
		s.commitSoon(n)
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
		x.launch(s.ctx, func() {
			<-s.slots
			s.commit(n)
		})
		return
	}
	// Exclusive: wait for every earlier call to commit, run alone, and hold
	// the barrier through post-execute.
	if n.prev != nil {
		select {
		case <-n.prev.committed:
		case <-s.abandonCh:
			s.abandon(n)
			return
		}
	}
	if s.isSettled() {
		s.abandon(n)
		return
	}
	x.dispatch(s.ctx)
	s.commit(n)
}

// abandon settles a call whose body never started.
func (s *scheduler) abandon(n *nested) {
	x := n.x
	if !x.created {
		x.create(s.ctx) // resolve, so that the tool's finalizer applies
	}
	x.err = &api.Error{Code: api.CodeAbortedBeforeDispatch,
		Message: fmt.Sprintf("%s was abandoned: the program finished before the call started", x.req.Tool)}
	s.commitSoon(n)
}

// commitSoon commits a call that has its outcome without blocking the
// sequencer: at once if the call before it has committed, else from a
// goroutine of its own.
func (s *scheduler) commitSoon(n *nested) {
	if n.prev != nil {
		select {
		case <-n.prev.committed:
		default:
			go s.commit(n)
			return
		}
	}
	s.commit(n)
}

// commit runs post-execute and finish once the call before has committed,
// and answers the program.
func (s *scheduler) commit(n *nested) {
	defer s.commits.Done()
	if n.prev != nil {
		<-n.prev.committed
		n.prev = nil // let the chain be collected
	}
	n.x.postExecute(s.ctx)
	r := n.x.finish(s.ctx)
	n.reply(callResult(r))
	close(n.committed)
}

// callResult is what the program sees of a result: the value, or the
// message. Error codes never reach the program.
func callResult(r api.Result) wasmhost.CallResult {
	if r.OK() {
		return wasmhost.CallResult{OK: true, Value: r.Value}
	}
	return wasmhost.CallResult{Message: r.Err.Message, Code: r.Err.Code}
}
