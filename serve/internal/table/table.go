// Package table holds the executions a node of ptcx serve knows, live and
// settled: by id, by a tenant's idempotency key, and each tenant's settled
// ones in settlement order, kept for a retention, at most a count of them,
// and within the tenant's retained bytes, the oldest forgotten first (the
// newest always kept). It knows nothing of what an execution is: an Entry's
// methods and a tenant's Budget are all it reads. It imports only the
// standard library; a Table is safe for concurrent use.
package table

import (
	"sync"
	"time"
)

// Entry is what a Table holds: an execution, as a pointer.
type Entry interface {
	comparable
	// ID is the entry's id. A newer entry may take the id of one the node
	// dropped; the newest added is the one found by it.
	ID() string
	// Tenant names the entry's tenant: entries are found, counted and kept
	// per tenant.
	Tenant() string
	// Key is the entry's idempotency key, "" for none; it is read when the
	// entry is added and when it is forgotten.
	Key() string
	// Settled reports whether the entry has settled (Live lists the
	// others). It is called with the table's lock held: it must not call
	// back into the table.
	Settled() bool
}

// Budget is a tenant's retained bytes (quotas.max_retained_bytes): while
// the tenant is over it, its oldest settled entries are forgotten.
type Budget interface {
	// Over reports whether the tenant holds more than its budget.
	Over() bool
	// Forget takes a forgotten entry's bytes off the tenant's.
	Forget(n int64)
}

// Table holds the entries. The zero value is not usable: see New.
type Table[E Entry] struct {
	mu          sync.Mutex
	byID        map[string]E
	byKey       map[string]E           // tenant + "\x00" + idempotency key
	settled     map[string]*settled[E] // per tenant
	live        int
	retention   time.Duration
	maxRetained int
	now         func() time.Time
	// evicted, when set, hears of each entry forgotten that was found by
	// its id (called with the lock held: it must not block).
	evicted func(id string)
}

// settled is one tenant's settled entries, in settlement order.
type settled[E Entry] struct {
	budget Budget
	list   []filed[E]
}

// filed is a settled entry: when it settled and the bytes it holds.
type filed[E Entry] struct {
	e     E
	at    time.Time
	bytes int64
}

// New returns a table that keeps each tenant's settled entries for
// retention, at most maxRetained of them; now is its clock (time.Now).
func New[E Entry](retention time.Duration, maxRetained int, now func() time.Time) *Table[E] {
	return &Table[E]{byID: map[string]E{}, byKey: map[string]E{}, settled: map[string]*settled[E]{},
		retention: retention, maxRetained: maxRetained, now: now}
}

// OnEvicted sets what hears of each entry forgotten that was found by its
// id: f is called with the table's lock held, and must not block.
func (t *Table[E]) OnEvicted(f func(id string)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.evicted = f
}

func keyOf(tenant, key string) string { return tenant + "\x00" + key }

// Add registers e, live, unless the table holds max live entries already
// (ok false); when e's idempotency key is its tenant's already, it
// returns the earlier entry instead (ok true), adding nothing.
func (t *Table[E]) Add(e E, max int) (prev E, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := e.Key()
	if key != "" {
		if p, ok := t.byKey[keyOf(e.Tenant(), key)]; ok {
			return p, true
		}
	}
	var none E
	if t.live >= max {
		return none, false
	}
	t.live++
	t.byID[e.ID()] = e
	if key != "" {
		t.byKey[keyOf(e.Tenant(), key)] = e
	}
	return none, true
}

// Get returns tenant's entry id, the zero E for an unknown one or another
// tenant's.
func (t *Table[E]) Get(tenant, id string) E {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	if !ok || e.Tenant() != tenant {
		var none E
		return none
	}
	return e
}

// Lookup returns any tenant's entry id (the zero E for none).
func (t *Table[E]) Lookup(id string) E {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// ByKey returns tenant's entry under an idempotency key (the zero E for
// none, and for the key "").
func (t *Table[E]) ByKey(tenant, key string) E {
	if key == "" {
		var none E
		return none
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byKey[keyOf(tenant, key)]
}

// Settle moves e, which settled at at, to its tenant's settled entries,
// and forgets those past the retention, over the count or while the
// tenant is over its budget b (never e, the newest). file is called once,
// with the table's lock held, and returns the bytes e holds settled: what
// b is given back when e is forgotten.
func (t *Table[E]) Settle(e E, at time.Time, b Budget, file func() int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live--
	n := e.Tenant()
	s := t.settled[n]
	if s == nil {
		s = &settled[E]{}
		t.settled[n] = s
	}
	s.budget = b
	s.list = append(s.list, filed[E]{e: e, at: at, bytes: file()})
	t.evictLocked(s, t.now())
}

// evictLocked forgets s's settled entries past the retention, over the
// count or over its budget (oldest first; the newest is kept), and
// returns how many it forgot.
func (t *Table[E]) evictLocked(s *settled[E], now time.Time) int {
	list := s.list
	n := 0
	for n < len(list) && (len(list)-n > t.maxRetained || now.Sub(list[n].at) > t.retention ||
		n < len(list)-1 && s.budget.Over()) {
		t.forgetLocked(s, list[n])
		n++
	}
	if n > 0 {
		// Dropped from the front, not copied: a settle at max_retained
		// would otherwise copy the whole list under the table's lock.
		// append moves what is left once the array's end is reached,
		// amortised; the entries let go are cleared, so that the array
		// does not keep them.
		clear(list[:n])
		s.list = list[n:]
	}
	return n
}

func (t *Table[E]) forgetLocked(s *settled[E], f filed[E]) {
	s.budget.Forget(f.bytes)
	// Not found by its id: an entry the node dropped, its id a newer one's.
	id := f.e.ID()
	if t.byID[id] == f.e {
		delete(t.byID, id)
		if t.evicted != nil {
			t.evicted(id)
		}
	}
	if key := f.e.Key(); key != "" && t.byKey[keyOf(f.e.Tenant(), key)] == f.e {
		delete(t.byKey, keyOf(f.e.Tenant(), key))
	}
}

// Sweep forgets every tenant's settled entries past the retention at now
// (or over the count or budget), and returns how many it forgot.
func (t *Table[E]) Sweep(now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.settled {
		if len(s.list) > 0 {
			n += t.evictLocked(s, now)
		}
	}
	return n
}

// Live returns the entries found by their id that have not settled.
func (t *Table[E]) Live() []E {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []E
	for _, e := range t.byID {
		if !e.Settled() {
			out = append(out, e)
		}
	}
	return out
}

// LiveCount is how many entries were added and have not settled (Settle).
func (t *Table[E]) LiveCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live
}
