package wasmhost

import (
	"context"
	"errors"
	"sync"
	"time"
)

// gate admits holders while they fit within a count and, optionally, a sum
// of weights (bytes), strictly in the order they asked: a holder that does
// not fit makes every later one wait behind it, so nobody starves. A
// released capacity is handed to the waiters at the head of the queue
// directly. It is safe for concurrent use. The Runtime has two: the guest
// slots (count only) and admission (runs and committed memory).
type gate struct {
	mu       sync.Mutex
	maxCount int
	maxBytes int64 // 0: no byte budget
	count    int
	bytes    int64
	queue    []*gateWaiter
}

type gateWaiter struct {
	bytes    int64
	ready    chan struct{} // closed once admitted
	admitted bool          // guarded by gate.mu
}

// errGateTimeout means a gate's wait reached its deadline.
var errGateTimeout = errors.New("wasmhost: waited too long")

func newGate(maxCount int, maxBytes int64) *gate {
	return &gate{maxCount: maxCount, maxBytes: maxBytes}
}

// fits reports whether one more holder of bytes fits now.
func (g *gate) fits(bytes int64) bool {
	return g.count < g.maxCount && (g.maxBytes == 0 || g.bytes+bytes <= g.maxBytes)
}

// tryAcquire takes a place at once if one is free and nobody waits.
func (g *gate) tryAcquire(bytes int64) bool {
	g.mu.Lock()
	ok := len(g.queue) == 0 && g.fits(bytes)
	if ok {
		g.count++
		g.bytes += bytes
	}
	g.mu.Unlock()
	return ok
}

// acquire takes a place, waiting in line until one is free, ctx ends
// (context.Cause) or deadline passes (errGateTimeout); a zero deadline
// means no deadline.
func (g *gate) acquire(ctx context.Context, deadline time.Time, bytes int64) error {
	g.mu.Lock()
	if len(g.queue) == 0 && g.fits(bytes) {
		g.count++
		g.bytes += bytes
		g.mu.Unlock()
		return nil
	}
	w := &gateWaiter{bytes: bytes, ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.mu.Unlock()

	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-expired:
		err = errGateTimeout
	}
	g.mu.Lock()
	if w.admitted {
		// Admitted meanwhile: pass the place on.
		g.mu.Unlock()
		g.release(bytes)
		return err
	}
	for i, q := range g.queue {
		if q == w {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			break
		}
	}
	g.admitHead() // the head may have been the one that did not fit
	g.mu.Unlock()
	return err
}

// release gives back a place taken by acquire or tryAcquire.
func (g *gate) release(bytes int64) {
	g.mu.Lock()
	g.count--
	g.bytes -= bytes
	g.admitHead()
	g.mu.Unlock()
}

// admitHead admits waiters from the head of the queue while they fit.
func (g *gate) admitHead() {
	for len(g.queue) > 0 && g.fits(g.queue[0].bytes) {
		w := g.queue[0]
		g.queue[0] = nil
		g.queue = g.queue[1:]
		g.count++
		g.bytes += w.bytes
		w.admitted = true
		close(w.ready)
	}
}

// waiting reports whether anyone waits.
func (g *gate) waiting() bool {
	g.mu.Lock()
	n := len(g.queue)
	g.mu.Unlock()
	return n > 0
}

// usage returns the places taken, their bytes and the waiters.
func (g *gate) usage() (count int, bytes int64, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.count, g.bytes, len(g.queue)
}
