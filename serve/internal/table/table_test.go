package table

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// entry is a test's execution.
type entry struct {
	id, tenant, key string
	done            atomic.Bool
}

func (e *entry) ID() string     { return e.id }
func (e *entry) Tenant() string { return e.tenant }
func (e *entry) Key() string    { return e.key }
func (e *entry) Settled() bool  { return e.done.Load() }

// budget is a tenant's retained bytes: held against max.
type budget struct {
	mu        sync.Mutex
	held, max int64
}

func (b *budget) Over() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held > b.max
}

func (b *budget) Forget(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
}

// charge files e's n bytes with b, as a node does when e settles.
func (b *budget) charge(n int64) func() int64 {
	return func() int64 {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.held += n
		return n
	}
}

// clock is a clock the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newEntry(tenant, id string) *entry { return &entry{id: id, tenant: tenant} }

// settleAll adds and settles n entries of tenant a, 1 byte each, a second
// apart, and returns them.
func settleAll(t *testing.T, tb *Table[*entry], c *clock, b *budget, n int) []*entry {
	t.Helper()
	var out []*entry
	for i := range n {
		e := newEntry("a", fmt.Sprintf("ex_%d", i))
		_, ok := tb.Add(e, 1<<20)
		require.True(t, ok)
		e.done.Store(true)
		tb.Settle(e, c.now(), b, b.charge(1))
		c.t = c.t.Add(time.Second)
		out = append(out, e)
	}
	return out
}

// kept reports which of es the table still finds by id.
func kept(tb *Table[*entry], es []*entry) []string {
	var out []string
	for _, e := range es {
		if tb.Lookup(e.id) != nil {
			out = append(out, e.id)
		}
	}
	return out
}

func TestTable_Settle_count(t *testing.T) {
	tests := []struct {
		name    string
		settled int
		want    []string
	}{
		{"below the count", 2, []string{"ex_0", "ex_1"}},
		{"at the count", 3, []string{"ex_0", "ex_1", "ex_2"}},
		{"above the count", 4, []string{"ex_1", "ex_2", "ex_3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1000, 0)}
			tb := New[*entry](time.Hour, 3, c.now)
			b := &budget{max: 1 << 20}
			es := settleAll(t, tb, c, b, tt.settled)
			require.Equal(t, tt.want, kept(tb, es))
			require.Equal(t, int64(len(tt.want)), b.held, "an evicted entry's bytes are given back")
		})
	}
}

func TestTable_Sweep_retention(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration // since the entry settled
		kept  bool
	}{
		{"below the retention", time.Minute - time.Nanosecond, true},
		{"at the retention", time.Minute, true},
		{"past the retention", time.Minute + time.Nanosecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1000, 0)}
			tb := New[*entry](time.Minute, 10, c.now)
			b := &budget{max: 1 << 20}
			e := newEntry("a", "ex_1")
			_, ok := tb.Add(e, 10)
			require.True(t, ok)
			at := c.t
			tb.Settle(e, at, b, b.charge(5))
			n := tb.Sweep(at.Add(tt.after))
			require.Equal(t, tt.kept, tb.Lookup("ex_1") != nil)
			if tt.kept {
				require.Zero(t, n)
				require.Equal(t, int64(5), b.held)
			} else {
				require.Equal(t, 1, n)
				require.Zero(t, b.held)
			}
		})
	}
}

// A settlement evicts the tenant's settled entries past the retention by
// the table's clock, as a sweep does.
func TestTable_Settle_evictsPastRetention(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tb := New[*entry](time.Minute, 10, c.now)
	b := &budget{max: 1 << 20}
	old, fresh := newEntry("a", "ex_old"), newEntry("a", "ex_fresh")
	_, _ = tb.Add(old, 10)
	_, _ = tb.Add(fresh, 10)
	tb.Settle(old, c.now(), b, b.charge(1))
	c.t = c.t.Add(time.Minute + time.Nanosecond)
	tb.Settle(fresh, c.now(), b, b.charge(1))
	require.Nil(t, tb.Lookup("ex_old"))
	require.NotNil(t, tb.Lookup("ex_fresh"))
}

func TestTable_Settle_bytes(t *testing.T) {
	tests := []struct {
		name string
		max  int64 // the tenant's budget; each entry holds 1 byte
		want []string
	}{
		{"below the budget", 4, []string{"ex_0", "ex_1", "ex_2"}},
		{"at the budget", 3, []string{"ex_0", "ex_1", "ex_2"}},
		{"above the budget", 2, []string{"ex_1", "ex_2"}},
		{"the newest is kept over the budget", 0, []string{"ex_2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1000, 0)}
			tb := New[*entry](time.Hour, 100, c.now)
			b := &budget{max: tt.max}
			es := settleAll(t, tb, c, b, 3)
			require.Equal(t, tt.want, kept(tb, es))
		})
	}
}

func TestTable_Add_maxLive(t *testing.T) {
	tests := []struct {
		name string
		live int
		ok   bool
	}{
		{"below the maximum", 1, true},
		{"at the maximum", 2, false},
		{"above the maximum", 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := New[*entry](time.Hour, 10, time.Now)
			tb.live = tt.live // as if added
			prev, ok := tb.Add(newEntry("a", "ex_new"), 2)
			require.Equal(t, tt.ok, ok)
			require.Nil(t, prev)
			require.Equal(t, tt.ok, tb.Lookup("ex_new") != nil)
		})
	}
}

func TestTable_Add_idempotencyKey(t *testing.T) {
	tb := New[*entry](time.Hour, 10, time.Now)
	first := &entry{id: "ex_1", tenant: "a", key: "k"}
	prev, ok := tb.Add(first, 10)
	require.True(t, ok)
	require.Nil(t, prev)

	again := &entry{id: "ex_2", tenant: "a", key: "k"}
	prev, ok = tb.Add(again, 10)
	require.True(t, ok)
	require.Same(t, first, prev, "the tenant's key is the first entry's")
	require.Nil(t, tb.Lookup("ex_2"), "nothing added")
	require.Equal(t, 1, tb.LiveCount())

	other := &entry{id: "ex_3", tenant: "b", key: "k"}
	prev, ok = tb.Add(other, 10)
	require.True(t, ok)
	require.Nil(t, prev, "another tenant's key is its own")
	require.Same(t, first, tb.ByKey("a", "k"))
	require.Same(t, other, tb.ByKey("b", "k"))
	require.Nil(t, tb.ByKey("a", ""))

	// A full table still answers a repeated key with its entry.
	prev, ok = tb.Add(&entry{id: "ex_4", tenant: "a", key: "k"}, 0)
	require.True(t, ok)
	require.Same(t, first, prev)
}

func TestTable_Get_otherTenant(t *testing.T) {
	tb := New[*entry](time.Hour, 10, time.Now)
	e := newEntry("a", "ex_1")
	_, ok := tb.Add(e, 10)
	require.True(t, ok)
	require.Same(t, e, tb.Get("a", "ex_1"))
	require.Nil(t, tb.Get("b", "ex_1"), "another tenant's entry is not found")
	require.Nil(t, tb.Get("a", "ex_2"))
}

// A settled entry the node dropped, whose id a newer entry took, is
// forgotten without the newer one: found by id and key, and no eviction
// heard of.
func TestTable_Settle_droppedCopyLeavesTheNewer(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tb := New[*entry](time.Hour, 1, c.now)
	var evicted []string
	tb.OnEvicted(func(id string) { evicted = append(evicted, id) })
	b := &budget{max: 1 << 20}
	old := &entry{id: "ex_1", tenant: "a", key: "k"}
	_, ok := tb.Add(old, 10)
	require.True(t, ok)
	newer := &entry{id: "ex_1", tenant: "a"} // taken over again: its key dropped
	_, ok = tb.Add(newer, 10)
	require.True(t, ok)
	require.Same(t, newer, tb.Lookup("ex_1"))

	old.done.Store(true)
	tb.Settle(old, c.now(), b, b.charge(1))
	other := newEntry("a", "ex_2")
	_, ok = tb.Add(other, 10)
	require.True(t, ok)
	other.done.Store(true)
	tb.Settle(other, c.now(), b, b.charge(1)) // the count of 1 forgets old

	require.Same(t, newer, tb.Lookup("ex_1"), "the newer entry stays")
	require.Nil(t, tb.ByKey("a", "k"), "the old entry's key is gone with it")
	require.Empty(t, evicted, "no entry found by its id was forgotten")
	require.Equal(t, []*entry{newer}, tb.Live())
	require.Equal(t, 1, tb.LiveCount())
}

func TestTable_OnEvicted_hearsEachForgottenID(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tb := New[*entry](time.Hour, 1, c.now)
	var evicted []string
	tb.OnEvicted(func(id string) { evicted = append(evicted, id) })
	settleAll(t, tb, c, &budget{max: 1 << 20}, 3)
	require.Equal(t, []string{"ex_0", "ex_1"}, evicted)
}

func TestTable_Live_listsTheUnsettled(t *testing.T) {
	tb := New[*entry](time.Hour, 10, time.Now)
	a, b := newEntry("a", "ex_1"), newEntry("a", "ex_2")
	_, _ = tb.Add(a, 10)
	_, _ = tb.Add(b, 10)
	b.done.Store(true) // settled, not filed yet
	require.Equal(t, []*entry{a}, tb.Live())
	require.Equal(t, 2, tb.LiveCount(), "counted live until Settle")
}

// TestTable_hammer adds, finds, settles and sweeps from many goroutines at
// once (run it under -race): every entry is found until settled, the live
// count ends at zero, and the budget ends holding what the table keeps.
func TestTable_hammer(t *testing.T) {
	const workers, each = 8, 200
	tb := New[*entry](time.Hour, 50, time.Now)
	budgets := map[string]*budget{"a": {max: 1 << 20}, "b": {max: 100}}
	var evictions atomic.Int64
	tb.OnEvicted(func(string) { evictions.Add(1) })
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tenant := []string{"a", "b"}[w%2]
			for i := range each {
				e := &entry{id: fmt.Sprintf("ex_%d_%d", w, i), tenant: tenant, key: fmt.Sprintf("k%d_%d", w, i)}
				if _, ok := tb.Add(e, 1<<20); !ok {
					t.Errorf("add %s refused", e.id)
					return
				}
				if tb.Get(tenant, e.id) != e || tb.ByKey(tenant, e.key) != e {
					t.Errorf("%s not found while live", e.id)
					return
				}
				_ = tb.Live()
				e.done.Store(true)
				b := budgets[tenant]
				tb.Settle(e, time.Now(), b, b.charge(3))
				if i%50 == 0 {
					tb.Sweep(time.Now())
				}
			}
		}()
	}
	wg.Wait()
	require.Zero(t, tb.LiveCount())
	require.Empty(t, tb.Live())
	for name, b := range budgets {
		n := int64(0)
		for _, s := range tb.settled[name].list {
			n += s.bytes
		}
		require.Equal(t, n, b.held, "tenant %s's budget holds what the table keeps", name)
		require.LessOrEqual(t, len(tb.settled[name].list), 50)
	}
	require.Equal(t, int64(workers*each)-int64(len(tb.byID)), evictions.Load())
}
