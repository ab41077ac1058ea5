package executor

import (
	"context"
	"sync"
	"sync/atomic"
)

// watch is the one watcher of a context that the bodies of a run's nested
// calls run under (the run_code body's, or the one wasmhost lends the
// inline path): when it ends, every body watched arms its grace timer
// (body.armGrace), as each would with a context.AfterFunc of its own. One
// per context and run instead of one per call spares an awaited call the
// watcher's allocations and its registration with the context. A body
// with a timeout of its own has its own context, and its own watcher.
type watch struct {
	done <-chan struct{} // ctx.Done(): what tells contexts apart (a context need not be comparable)
	stop func() bool

	// solo is one body watched without the lock: an awaited call's, the
	// common case (one at a time). Others go in the list. end takes solo
	// out with a swap, under mu, and arms it there; a body that finds
	// itself taken out waits for mu (remove), so it sees its grace timer
	// armed, as one in the list does.
	solo atomic.Pointer[body]
	over atomic.Bool // ended, for add's check of solo without the lock

	mu    sync.Mutex
	ended bool  // ctx is done: a body added now arms at once
	head  *body // the bodies watched, most recent first
}

func newWatch(ctx context.Context) *watch {
	w := &watch{done: ctx.Done(), stop: func() bool { return false }}
	if w.done != nil { // else ctx never ends
		w.stop = context.AfterFunc(ctx, w.end)
	}
	return w
}

// add watches b, whose bodyCtx is the watch's context.
func (w *watch) add(b *body) {
	b.solo = true
	if w.solo.CompareAndSwap(nil, b) {
		// If end ran meanwhile, it either took b out (and armed it) or
		// set over before, which this load sees.
		if w.over.Load() && w.solo.CompareAndSwap(b, nil) {
			b.solo = false
			b.armGrace()
		}
		return
	}
	b.solo = false
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		b.armGrace()
		return
	}
	b.linked, b.prev, b.next = true, nil, w.head
	if w.head != nil {
		w.head.prev = b
	}
	w.head = b
	w.mu.Unlock()
}

// remove stops watching b, if it still is.
func (w *watch) remove(b *body) {
	if b.solo {
		b.solo = false
		if !w.solo.CompareAndSwap(b, nil) {
			// end took b out and armed it, under mu: wait for it.
			w.mu.Lock()
			w.mu.Unlock()
		}
		return
	}
	w.mu.Lock()
	if b.linked {
		if b.prev != nil {
			b.prev.next = b.next
		} else {
			w.head = b.next
		}
		if b.next != nil {
			b.next.prev = b.prev
		}
		b.linked, b.prev, b.next = false, nil, nil
	}
	w.mu.Unlock()
}

// end runs once ctx is done: every body watched arms its grace timer.
func (w *watch) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
	w.over.Store(true)
	if b := w.solo.Swap(nil); b != nil {
		b.armGrace()
	}
	for b := w.head; b != nil; {
		next := b.next
		b.linked, b.prev, b.next = false, nil, nil
		b.armGrace()
		b = next
	}
	w.head = nil
}

// watches are a scheduler's watch of each context its bodies run under:
// two at most (the run_code body's context, the inline path's).
type watches struct {
	last atomic.Pointer[watch] // the one of returned last: an awaited call's, without the lock
	mu   sync.Mutex
	list []*watch
}

// of returns the watch of ctx, making it at its first use.
func (ws *watches) of(ctx context.Context) *watch {
	done := ctx.Done()
	if w := ws.last.Load(); w != nil && w.done == done {
		return w
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.list {
		if w.done == done {
			ws.last.Store(w)
			return w
		}
	}
	w := newWatch(ctx)
	ws.list = append(ws.list, w)
	ws.last.Store(w)
	return w
}

// stop ends every watch. Call it once no body runs any more.
func (ws *watches) stop() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.last.Store(nil)
	for _, w := range ws.list {
		w.stop()
	}
	ws.list = nil
}
