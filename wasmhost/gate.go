package wasmhost

import (
	"context"
	"errors"
	"sync"
	"time"
)

// gate admits holders while they fit within a count and, optionally, a sum
// of weights (bytes). Holders that must wait wait by fairness key
// (Program.Tenant): the keys with waiters take turns, round robin, one
// admission each, and the waiters of one key are admitted in the order they
// asked. So a key with a thousand waiters delays a key with one by at most
// one admission per other waiting key, never by the thousand. A key that
// comes to wait takes its turn before the key admitted last: a guest that
// gives its slot up and asks again (run.yieldSlot) so alternates with
// another tenant's, which would otherwise find the other key's line still
// first and get one turn in three. A head that does not fit (too many
// bytes) makes every later one wait behind it, so nobody starves. A released capacity is handed to the waiters at the head
// of the line directly. It is safe for concurrent use. The Runtime has two:
// the guest slots (count only) and admission (runs and committed memory).
//
// The fast path, a place free and nobody waiting, touches no map: fairness
// costs only the runs that wait.
type gate struct {
	mu       sync.Mutex
	maxCount int
	maxBytes int64 // 0: no byte budget
	count    int
	bytes    int64
	waiters  int                  // in all the lines
	lines    map[string]*gateLine // the keys with waiters
	turns    []*gateLine          // the keys with waiters, the one whose turn it is first
	last     string               // the key admitted last
}

// gateLine is the waiters of one key, first come first served.
type gateLine struct {
	key     string
	waiters []*gateWaiter
}

type gateWaiter struct {
	bytes    int64
	ready    chan struct{} // closed once admitted
	admitted bool          // guarded by gate.mu
}

// errGateTimeout means a gate's wait reached its deadline.
var errGateTimeout = errors.New("wasmhost: waited too long")

func newGate(maxCount int, maxBytes int64) *gate {
	return &gate{maxCount: maxCount, maxBytes: maxBytes, lines: map[string]*gateLine{}}
}

// fits reports whether one more holder of bytes fits now.
func (g *gate) fits(bytes int64) bool {
	return g.count < g.maxCount && (g.maxBytes == 0 || g.bytes+bytes <= g.maxBytes)
}

// tryAcquire takes a place for a holder of key at once if one is free
// and nobody waits.
func (g *gate) tryAcquire(key string, bytes int64) bool {
	g.mu.Lock()
	ok := g.waiters == 0 && g.fits(bytes)
	if ok {
		g.count++
		g.bytes += bytes
		g.last = key
	}
	g.mu.Unlock()
	return ok
}

// acquire takes a place for a holder of key, waiting its turn until one is
// free, ctx ends (context.Cause) or deadline passes (errGateTimeout); a zero
// deadline means no deadline.
func (g *gate) acquire(ctx context.Context, deadline time.Time, key string, bytes int64) error {
	g.mu.Lock()
	if g.waiters == 0 && g.fits(bytes) {
		g.count++
		g.bytes += bytes
		g.last = key
		g.mu.Unlock()
		return nil
	}
	w := &gateWaiter{bytes: bytes, ready: make(chan struct{})}
	g.enqueue(key, w)
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
	g.remove(key, w)
	g.admitHead() // the head may have been the one that did not fit
	g.mu.Unlock()
	return err
}

// enqueue puts w at the end of key's line. A key that had no waiters
// takes its turn after the keys that have, but before the key admitted
// last, which admitHead put at the back when it still had waiters.
// Under g.mu.
func (g *gate) enqueue(key string, w *gateWaiter) {
	l := g.lines[key]
	if l == nil {
		l = &gateLine{key: key}
		g.lines[key] = l
		if n := len(g.turns); n > 0 && g.turns[n-1].key == g.last {
			g.turns = append(g.turns, g.turns[n-1])
			g.turns[n-1] = l
		} else {
			g.turns = append(g.turns, l)
		}
	}
	l.waiters = append(l.waiters, w)
	g.waiters++
}

// remove takes w, which gave up, out of key's line. Under g.mu.
func (g *gate) remove(key string, w *gateWaiter) {
	l := g.lines[key]
	for i, q := range l.waiters {
		if q == w {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			g.waiters--
			break
		}
	}
	if len(l.waiters) == 0 {
		g.drop(l)
	}
}

// drop forgets the line l, which has no waiters left. Under g.mu.
func (g *gate) drop(l *gateLine) {
	delete(g.lines, l.key)
	for i, t := range g.turns {
		if t == l {
			g.turns = append(g.turns[:i], g.turns[i+1:]...)
			break
		}
	}
}

// release gives back a place taken by acquire or tryAcquire.
func (g *gate) release(bytes int64) {
	g.mu.Lock()
	g.count--
	g.bytes -= bytes
	g.admitHead()
	g.mu.Unlock()
}

// admitHead admits waiters while the head of the line whose turn it is
// fits: that key's first waiter, after which the key's turn passes to the
// next key (it goes to the back of the turns while it has waiters).
// Under g.mu.
func (g *gate) admitHead() {
	for len(g.turns) > 0 {
		l := g.turns[0]
		w := l.waiters[0]
		if !g.fits(w.bytes) {
			return
		}
		l.waiters[0] = nil
		l.waiters = l.waiters[1:]
		g.waiters--
		copy(g.turns, g.turns[1:])
		if len(l.waiters) == 0 {
			g.turns = g.turns[:len(g.turns)-1]
			delete(g.lines, l.key)
		} else {
			g.turns[len(g.turns)-1] = l
		}
		g.count++
		g.bytes += w.bytes
		g.last = l.key
		w.admitted = true
		close(w.ready)
	}
}

// waitingBy returns how many wait with key and with the other keys.
func (g *gate) waitingBy(key string) (same, other int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.lines[key]; l != nil {
		same = len(l.waiters)
	}
	return same, g.waiters - same
}

// waiting reports whether anyone waits.
func (g *gate) waiting() bool {
	g.mu.Lock()
	n := g.waiters
	g.mu.Unlock()
	return n > 0
}

// usage returns the places taken, their bytes and the waiters.
func (g *gate) usage() (count int, bytes int64, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.count, g.bytes, g.waiters
}
