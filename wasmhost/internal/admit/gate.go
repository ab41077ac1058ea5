// Package admit is admission to scarce places: a Gate admits holders
// within a count and a byte budget, fairly across keys (wasmhost's guest
// slots, and its admission of runs and their committed memory).
package admit

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Gate admits holders while they fit within a count and, optionally, a sum
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
type Gate struct {
	mu       sync.Mutex
	maxCount int
	maxBytes int64 // 0: no byte budget
	count    int
	bytes    int64
	waiters  int              // in all the lines
	lines    map[string]*line // the keys with waiters
	turns    []*line          // the keys with waiters, the one whose turn it is first
	last     string           // the key admitted last
}

// line is the waiters of one key, first come first served.
type line struct {
	key     string
	waiters []*waiter
}

type waiter struct {
	bytes    int64
	ready    chan struct{} // closed once admitted
	admitted bool          // guarded by Gate.mu
}

// ErrTimeout means a gate's wait reached its deadline.
var ErrTimeout = errors.New("wasmhost: waited too long")

func New(maxCount int, maxBytes int64) *Gate {
	return &Gate{maxCount: maxCount, maxBytes: maxBytes, lines: map[string]*line{}}
}

// fits reports whether one more holder of bytes fits now.
func (g *Gate) fits(bytes int64) bool {
	return g.count < g.maxCount && (g.maxBytes == 0 || g.bytes+bytes <= g.maxBytes)
}

// TryAcquire takes a place for a holder of key at once if one is free
// and nobody waits.
func (g *Gate) TryAcquire(key string, bytes int64) bool {
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

// Acquire takes a place for a holder of key, waiting its turn until one is
// free, ctx ends (context.Cause) or deadline passes (ErrTimeout); a zero
// deadline means no deadline.
func (g *Gate) Acquire(ctx context.Context, deadline time.Time, key string, bytes int64) error {
	g.mu.Lock()
	if g.waiters == 0 && g.fits(bytes) {
		g.count++
		g.bytes += bytes
		g.last = key
		g.mu.Unlock()
		return nil
	}
	w := &waiter{bytes: bytes, ready: make(chan struct{})}
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
		err = ErrTimeout
	}
	g.mu.Lock()
	if w.admitted {
		// Admitted meanwhile: pass the place on.
		g.mu.Unlock()
		g.Release(bytes)
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
func (g *Gate) enqueue(key string, w *waiter) {
	l := g.lines[key]
	if l == nil {
		l = &line{key: key}
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
func (g *Gate) remove(key string, w *waiter) {
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
func (g *Gate) drop(l *line) {
	delete(g.lines, l.key)
	for i, t := range g.turns {
		if t == l {
			g.turns = append(g.turns[:i], g.turns[i+1:]...)
			break
		}
	}
}

// Release gives back a place taken by acquire or tryAcquire.
func (g *Gate) Release(bytes int64) {
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
func (g *Gate) admitHead() {
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

// WaitingBy returns how many wait with key and with the other keys.
func (g *Gate) WaitingBy(key string) (same, other int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.lines[key]; l != nil {
		same = len(l.waiters)
	}
	return same, g.waiters - same
}

// Waiting reports whether anyone waits.
func (g *Gate) Waiting() bool {
	g.mu.Lock()
	n := g.waiters
	g.mu.Unlock()
	return n > 0
}

// Usage returns the places taken, their bytes and the waiters.
func (g *Gate) Usage() (count int, bytes int64, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.count, g.bytes, g.waiters
}

// MaxCount is the most holders at once.
func (g *Gate) MaxCount() int { return g.maxCount }

// MaxBytes is the most bytes held at once, 0 for no byte budget.
func (g *Gate) MaxBytes() int64 { return g.maxBytes }

// Read calls f with the places taken, their bytes and the waiters, under
// the gate's lock: what f reads of an account the gate guards (Charge) is
// consistent with them.
func (g *Gate) Read(f func(count int, bytes int64, waiting int)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(g.count, g.bytes, g.waiters)
}

// Charge takes bytes that no holder holds (an idle instance, a kept
// buffer), adding them to *account, if they fit and nobody waits: such
// bytes never take memory a holder waits for. account is guarded by the
// gate's lock.
func (g *Gate) Charge(bytes int64, account *int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.waiters > 0 || (g.maxBytes > 0 && g.bytes+bytes > g.maxBytes) {
		return false
	}
	g.bytes += bytes
	*account += bytes
	return true
}

// Uncharge gives back bytes that Charge (or Convert) took.
func (g *Gate) Uncharge(bytes int64, account *int64) {
	g.mu.Lock()
	g.bytes -= bytes
	*account -= bytes
	g.admitHead()
	g.mu.Unlock()
}

// Convert turns a holder's place into a charge, in one step: the place and
// its held bytes are given back and charge bytes taken, added to *account.
// The charge may take the bytes past the budget; holders then wait.
func (g *Gate) Convert(held, charge int64, account *int64) {
	g.mu.Lock()
	g.count--
	g.bytes += charge - held
	*account += charge
	g.admitHead()
	g.mu.Unlock()
}

// Hand takes charge bytes out of *account without giving them back: a
// holder admitted with them holds them now.
func (g *Gate) Hand(charge int64, account *int64) {
	g.mu.Lock()
	*account -= charge
	g.mu.Unlock()
}
