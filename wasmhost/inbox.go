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
// nothing.
type inbox struct {
	mu     sync.Mutex
	closed bool
	queue  []completion
	wake   chan struct{}
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
// bytes. Calls after the first are ignored.
func (b *inbox) doneFunc(id int32, args int) func(CallResult) {
	var called atomic.Bool
	return func(res CallResult) {
		if called.Swap(true) {
			return
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return
		}
		b.queue = append(b.queue, completion{id: id, args: args, res: res})
		b.mu.Unlock()
		select {
		case b.wake <- struct{}{}:
		default:
		}
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
