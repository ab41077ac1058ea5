package wasmhost

import (
	"sync"
	"sync/atomic"
)

// inbox collects the outcomes of nested calls. Dispatchers report them from
// any goroutine, at any time, through the done functions it makes; the
// run's goroutine takes them. Reporting never blocks: outcomes are queued
// and the run is woken through a one-slot channel. After close, outcomes
// are dropped, so a done called after Run returned costs nothing and holds
// nothing. An idle suspension keeps its run's inbox open instead, for the
// run that resumes from it (keep, suspend_idle.go).
type inbox struct {
	mu     sync.Mutex
	closed bool
	queue  []completion
	wake   chan struct{}
	// answered, while an idle suspension keeps the inbox, is closed by
	// the first outcome queued (and then nil).
	answered chan struct{}

	reporters []reporter // the rest of the slab doneFunc takes from (the run's goroutine's)
}

type completion struct {
	id   int32
	args int // the size of the call's arguments (api.Limits.MaxInFlightArgBytes)
	res  CallResult
}

func newInbox() *inbox {
	return &inbox{wake: make(chan struct{}, 1)}
}

// doneFunc returns the done callback of call id, whose arguments are args
// bytes. Calls after the first are ignored. It is called on the goroutine
// that drives the run (a call's dispatch, a held call's release).
func (b *inbox) doneFunc(id int32, args int) func(CallResult) {
	p := fromSlab(&b.reporters) // never reused: a done called late stays a no-op
	p.b, p.id, p.args = b, id, args
	return p.report // one allocation (the method value), not a closure and its flag
}

// reporter is one call's done callback.
type reporter struct {
	b      *inbox
	id     int32
	args   int
	called atomic.Bool
}

func (p *reporter) report(res CallResult) {
	if p.called.Swap(true) {
		return
	}
	b := p.b
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.queue = append(b.queue, completion{id: p.id, args: p.args, res: res})
	if b.answered != nil {
		close(b.answered)
		b.answered = nil
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take moves the queued outcomes into buf (emptied first) and returns it.
func (b *inbox) take(buf []completion) []completion {
	b.mu.Lock()
	buf, b.queue = b.queue, buf[:0]
	b.mu.Unlock()
	return buf
}

// close drops queued outcomes and every later one.
func (b *inbox) close() {
	b.mu.Lock()
	b.closed = true
	b.queue = nil
	b.mu.Unlock()
}
