package quota

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/internal/compute"
)

// gauge is a Gauge the test reads.
type gauge struct{ v atomic.Int64 }

func (g *gauge) Set(f float64) { g.v.Store(int64(f)) }

func newQuota(l Limits, b *compute.Bucket) (*Quota, Gauges) {
	g := Gauges{Memory: &gauge{}, Parked: &gauge{}, Streams: &gauge{}}
	return New(l, b, g), g
}

func shown(g Gauge) int64 { return g.(*gauge).v.Load() }

var roomy = Limits{MaxConcurrent: 10, MaxPending: 10, MemoryShare: 100, MaxParked: 100, MaxStreams: 10}

// TestQuota_Admit_bounds puts the tenant below, at and past each bound:
// below it is admitted, at or past it refused with that bound, taking
// nothing.
func TestQuota_Admit_bounds(t *testing.T) {
	client := Work{Client: true}
	tests := []struct {
		name   string
		limits func(l *Limits)
		held   func(q *Quota) // what the tenant holds before w
		w      Work
		want   Bound // 0: admitted
		heldB  int64
	}{
		{"max_concurrent below", func(l *Limits) { l.MaxConcurrent = 2 }, occupy(1), Work{}, 0, 0},
		{"max_concurrent at", func(l *Limits) { l.MaxConcurrent = 2 }, occupy(2), Work{}, MaxConcurrent, 0},
		{"max_concurrent past", func(l *Limits) { l.MaxConcurrent = 2 }, occupy(3), Work{}, MaxConcurrent, 0},
		{"max_pending below", func(l *Limits) { l.MaxPending = 2 }, pending(1), client, 0, 0},
		{"max_pending at", func(l *Limits) { l.MaxPending = 2 }, pending(2), client, MaxPending, 0},
		{"max_pending past", func(l *Limits) { l.MaxPending = 2 }, pending(3), client, MaxPending, 0},
		{"max_pending not for a resume", func(l *Limits) { l.MaxPending = 2 }, pending(2), Work{Client: true, Resume: true}, 0, 0},
		{"max_pending not without client tools", func(l *Limits) { l.MaxPending = 2 }, pending(2), Work{}, 0, 0},
		{"memory share below", func(l *Limits) { l.MemoryShare = 10 }, memory(4), Work{Memory: 5}, 0, 0},
		{"memory share at", func(l *Limits) { l.MemoryShare = 10 }, memory(5), Work{Memory: 5}, 0, 0},
		{"memory share past", func(l *Limits) { l.MemoryShare = 10 }, memory(6), Work{Memory: 5}, MemoryShare, 6},
		{"memory share not for no memory", func(l *Limits) { l.MemoryShare = 10 }, memory(11), Work{}, 0, 0},
		{"parked bytes below", func(l *Limits) { l.MaxParked = 10 }, parked(9), client, 0, 0},
		{"parked bytes at", func(l *Limits) { l.MaxParked = 10 }, parked(10), client, ParkedBytes, 10},
		{"parked bytes past", func(l *Limits) { l.MaxParked = 10 }, parked(11), client, ParkedBytes, 11},
		{"parked bytes not for a resume", func(l *Limits) { l.MaxParked = 10 }, parked(10), Work{Client: true, Resume: true}, 0, 0},
		{"parked bytes not without client tools", func(l *Limits) { l.MaxParked = 10 }, parked(10), Work{}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := roomy
			tt.limits(&l)
			q, _ := newQuota(l, nil)
			tt.held(q)
			live, pend, mem := q.live, q.pending, q.memory
			k, r := q.Admit(tt.w)
			if tt.want == 0 {
				require.Nil(t, r)
				require.NotNil(t, k)
				k.Release()
			} else {
				require.Nil(t, k)
				require.Equal(t, &Refusal{Bound: tt.want, Held: tt.heldB}, r)
			}
			require.Equal(t, live, q.live, "nothing taken once given back or refused")
			require.Equal(t, pend, q.pending)
			require.Equal(t, mem, q.memory)
		})
	}
}

func occupy(n int) func(*Quota) { return func(q *Quota) { q.Occupy(n) } }
func pending(n int) func(*Quota) {
	return func(q *Quota) {
		for range n {
			q.ForcePending()
		}
	}
}
func memory(n int64) func(*Quota) { return func(q *Quota) { q.memory = n } }
func parked(n int64) func(*Quota) { return func(q *Quota) { q.Parked(n) } }

// Admit checks the bounds in order, so a tenant past several is refused
// for the first; a compute refusal gives back nothing it took.
func TestQuota_Admit_order(t *testing.T) {
	now := time.Unix(1000, 0)
	b := compute.New(1, time.Second, func() time.Time { return now })
	b.Charge(2 * time.Second) // empty: a second below zero
	l := Limits{MaxConcurrent: 1, MaxPending: 1, MemoryShare: 1, MaxParked: 1, MaxStreams: 1}
	q, _ := newQuota(l, b)
	w := Work{Client: true, Memory: 2, Compute: time.Second}
	want := []Bound{MaxConcurrent, MaxPending, Compute, MemoryShare, ParkedBytes}
	undo := []func(){
		q.Occupy(1),
		q.ForcePending(),
		func() { now = now.Add(2 * time.Minute) }, // refilled
		func() { w.Memory = 1 },
	}
	q.Parked(1)
	for i, bound := range want {
		_, r := q.Admit(w)
		require.NotNil(t, r, "bound %d", i)
		require.Equal(t, bound, r.Bound)
		if bound == Compute {
			require.InDelta(t, 60.06, r.Wait.Seconds(), 0.01, "a second below zero at a second per minute")
		}
		if i < len(undo) {
			undo[i]()
		}
	}
	ok, _ := b.Reserve(0)
	require.True(t, ok, "the refusals past compute gave its reservation back")
	require.Zero(t, q.Pending(), "no refusal kept a pending reservation")
}

// A ticket gives back its run's part once (EndRun), and its pending
// reservation to whoever takes it, once.
func TestTicket_EndRun_Release(t *testing.T) {
	now := time.Unix(1000, 0)
	b := compute.New(10, time.Second, func() time.Time { return now })
	q, g := newQuota(roomy, b)
	k, r := q.Admit(Work{Client: true, Memory: 7, Compute: 4 * time.Second})
	require.Nil(t, r)
	require.Equal(t, 1, q.live)
	require.Equal(t, int64(7), shown(g.Memory))
	require.Equal(t, 1, q.Pending())

	k.EndRun()
	k.EndRun()
	require.Zero(t, q.live)
	require.Zero(t, shown(g.Memory))
	require.Equal(t, 1, q.Pending(), "the pending reservation outlives the run")
	pend := k.TakePending()
	require.NotNil(t, pend)
	require.Nil(t, k.TakePending(), "taken once")
	k.Release() // holds nothing more
	require.Equal(t, 1, q.Pending())
	pend()
	pend()
	require.Zero(t, q.Pending())
}

func TestQuota_OpenStream_bound(t *testing.T) {
	tests := []struct {
		name string
		open int
		ok   bool
	}{
		{"below the quota", 1, true},
		{"at the quota", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, g := newQuota(Limits{MaxStreams: 2}, nil)
			var closes []func()
			for range tt.open {
				c, r := q.OpenStream()
				require.Nil(t, r)
				closes = append(closes, c)
			}
			c, r := q.OpenStream()
			if tt.ok {
				require.Nil(t, r)
				c()
				c()
			} else {
				require.Equal(t, &Refusal{Bound: MaxStreams}, r)
			}
			require.Equal(t, int64(tt.open), shown(g.Streams))
			for _, c := range closes {
				c()
			}
			require.Zero(t, shown(g.Streams))
		})
	}
}

func TestQuota_ParkRoom_bound(t *testing.T) {
	q, g := newQuota(Limits{MaxParked: 10}, nil)
	q.Parked(9)
	require.True(t, q.ParkRoom(), "below the quota")
	q.Parked(1)
	require.False(t, q.ParkRoom(), "at the quota")
	q.Parked(5)
	require.False(t, q.ParkRoom(), "past it (one snapshot may pass it)")
	require.Equal(t, int64(15), shown(g.Parked))
	q.Parked(-15)
	require.True(t, q.ParkRoom())
}

// TestQuota_hammer admits, ends and releases from many goroutines at once
// (run it under -race): the tenant never holds more runs, memory or
// pending executions than its limits, and holds nothing at the end.
func TestQuota_hammer(t *testing.T) {
	const workers, each = 8, 300
	l := Limits{MaxConcurrent: 3, MaxPending: 2, MemoryShare: 5, MaxParked: 1 << 20, MaxStreams: 2}
	b := compute.New(1e9, time.Second, time.Now)
	q, g := newQuota(l, b)
	var wg sync.WaitGroup

	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				work := Work{Memory: int64(1 + (w+i)%2), Compute: time.Millisecond, Client: i%3 == 0}
				k, r := q.Admit(work)
				q.mu.Lock()
				if q.live > l.MaxConcurrent || q.memory > l.MemoryShare || q.pending > l.MaxPending {
					t.Errorf("past a limit: %d runs, %d bytes, %d pending", q.live, q.memory, q.pending)
				}
				q.mu.Unlock()
				if c, r := q.OpenStream(); r == nil {
					defer c()
				}
				if r != nil {
					continue
				}
				k.EndRun()
				if p := k.TakePending(); p != nil {
					p()
				}
				k.Release()
			}
		}()
	}
	wg.Wait()
	require.Zero(t, q.live)
	require.Zero(t, q.memory)
	require.Zero(t, q.Pending())
	require.Zero(t, q.streams)
	require.Zero(t, shown(g.Memory))
}
