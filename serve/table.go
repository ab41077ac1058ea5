package serve

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
)

// table holds every execution the server knows, live and settled, by id;
// each tenant's settled ones are kept for the retention and at most
// maxRetained of them, the oldest evicted first.
type table struct {
	mu          sync.Mutex
	byID        map[string]*execution
	byKey       map[string]*execution   // tenant + "\x00" + idempotency key
	settled     map[string][]*execution // per tenant, in settlement order
	live        int
	retention   time.Duration
	maxRetained int
	// evicted, when set, hears of each execution forgotten (called with
	// the lock held: it must not block).
	evicted func(id string)
}

func newTable(retention time.Duration, maxRetained int) *table {
	return &table{byID: map[string]*execution{}, byKey: map[string]*execution{}, settled: map[string][]*execution{},
		retention: retention, maxRetained: maxRetained}
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "ex_" + hex.EncodeToString(b[:])
}

// add registers a new live execution unless the server holds max live
// ones already; with an idempotency key already used, it returns the
// earlier execution instead.
func (t *table) add(x *execution, max int) (prev *execution, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x.key != "" {
		if p, ok := t.byKey[x.tenant.name+"\x00"+x.key]; ok {
			return p, true
		}
	}
	if t.live >= max {
		return nil, false
	}
	t.live++
	t.byID[x.id] = x
	if x.key != "" {
		t.byKey[x.tenant.name+"\x00"+x.key] = x
	}
	return nil, true
}

// get returns the execution id of tenant, nil for an unknown one or
// another tenant's.
func (t *table) get(tenant, id string) *execution {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.byID[id]
	if x == nil || x.tenant.name != tenant {
		return nil
	}
	return x
}

// lookup returns any tenant's execution: for the executor's hooks, which
// know only the run_code call id.
func (t *table) lookup(id string) *execution {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// settle moves x, whose result is r, to the settled list, counting its
// retained bytes as the tenant's settled ones, and evicts what is past
// the retention, over the count or over the tenant's retained bytes.
func (t *table) settle(x *execution, r api.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live--
	x.mu.Lock()
	x.filed = true
	live := x.bytes
	x.bytes = x.tenant.settleRetained(live, resultBytes(r, x.calls))
	x.mu.Unlock()
	name := x.tenant.name
	t.settled[name] = append(t.settled[name], x)
	t.evictLocked(x.tenant, time.Now())
}

// evictLocked forgets tenant tn's settled executions past the retention,
// over the count or over its retained bytes (oldest first; the newest is
// kept), and returns how many it forgot.
func (t *table) evictLocked(tn *tenant, now time.Time) int {
	name := tn.name
	list := t.settled[name]
	n := 0
	for n < len(list) && (len(list)-n > t.maxRetained || now.Sub(list[n].settledAt) > t.retention ||
		n < len(list)-1 && tn.overRetained()) {
		t.forgetLocked(list[n])
		n++
	}
	if n > 0 {
		t.settled[name] = append(list[:0:0], list[n:]...)
	}
	return n
}

func (t *table) forgetLocked(x *execution) {
	// Settled: no one writes x.bytes any more. Not in byID: a copy this
	// node dropped, its id another's here since (cluster_fence.go).
	x.tenant.forgetRetained(x.bytes)
	if t.byID[x.id] == x {
		delete(t.byID, x.id)
		if t.evicted != nil {
			t.evicted(x.id)
		}
	}
	if x.key != "" && t.byKey[x.tenant.name+"\x00"+x.key] == x {
		delete(t.byKey, x.tenant.name+"\x00"+x.key)
	}
}

// sweep evicts settled executions past the retention, for every tenant,
// and returns how many it evicted.
func (t *table) sweep(now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, list := range t.settled {
		if len(list) > 0 {
			n += t.evictLocked(list[0].tenant, now)
		}
	}
	return n
}

// liveExecutions returns the executions not settled yet.
func (t *table) liveExecutions() []*execution {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*execution
	for _, x := range t.byID {
		if !x.settled() {
			out = append(out, x)
		}
	}
	return out
}

func (t *table) liveCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live
}

// getByKey returns tenant's execution under an idempotency key, if any.
func (t *table) getByKey(tenant, key string) *execution {
	if key == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byKey[tenant+"\x00"+key]
}
