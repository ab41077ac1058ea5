package wasmhost

import (
	"container/heap"
	"slices"
	"time"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// timerQueue holds a run's pending setTimeout timers, earliest first (ties
// in the order they were set). Cleared timers are dropped lazily. It is
// used by the run's goroutine only.
type timerQueue struct {
	fired time.Time // the deadline of the last timer fired
	last  int32
	live  map[int32]struct{}
	order timerHeap
}

type timerEntry struct {
	at time.Time
	id int32
}

// add schedules a timer delay milliseconds after now and returns its id,
// or false when abi.MaxTimers are already pending.
func (q *timerQueue) add(now time.Time, delay int32) (int32, bool) {
	if len(q.live) >= abi.MaxTimers {
		return 0, false
	}
	if q.live == nil {
		q.live = make(map[int32]struct{})
	}
	q.last++
	q.live[q.last] = struct{}{}
	heap.Push(&q.order, timerEntry{at: now.Add(time.Duration(delay) * time.Millisecond), id: q.last})
	if len(q.order) > 2*len(q.live)+64 {
		q.compact()
	}
	return q.last, true
}

// clear cancels timer id; unknown ids are ignored.
func (q *timerQueue) clear(id int32) { delete(q.live, id) }

// len returns the number of pending timers.
func (q *timerQueue) len() int { return len(q.live) }

// next returns the earliest pending deadline, if any.
func (q *timerQueue) next() (time.Time, bool) {
	q.dropCleared()
	if len(q.order) == 0 {
		return time.Time{}, false
	}
	return q.order[0].at, true
}

// due removes and returns the earliest timer whose deadline is not after now.
func (q *timerQueue) due(now time.Time) (int32, bool) {
	q.dropCleared()
	if len(q.order) == 0 || q.order[0].at.After(now) {
		return 0, false
	}
	e := heap.Pop(&q.order).(timerEntry)
	delete(q.live, e.id)
	q.fired = e.at
	return e.id, true
}

// virtualNow is the time a deterministic run's timers count from: the
// deadline of the last timer fired, else the run's start. It advances only
// as timers fire, so the order in which timers fire depends on their delays
// and the order they were set in, never on how long the guest computed or
// waited meanwhile; a timer still waits until its deadline in real time,
// and fires at once when real time is past it.
func (q *timerQueue) virtualNow(start time.Time) time.Time {
	if q.fired.IsZero() {
		return start
	}
	return q.fired
}

func (q *timerQueue) dropCleared() {
	for len(q.order) > 0 {
		if _, ok := q.live[q.order[0].id]; ok {
			return
		}
		heap.Pop(&q.order)
	}
}

func (q *timerQueue) compact() {
	kept := q.order[:0]
	for _, e := range q.order {
		if _, ok := q.live[e.id]; ok {
			kept = append(kept, e)
		}
	}
	q.order = kept
	heap.Init(&q.order)
}

type timerHeap []timerEntry

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].id < h[j].id
	}
	return h[i].at.Before(h[j].at)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// snapshot lists the pending timers, their deadlines relative to began.
func (q *timerQueue) snapshot(began time.Time) snapshot.Timers {
	t := snapshot.Timers{Last: q.last}
	if !q.fired.IsZero() {
		t.Fired = max(int64(q.fired.Sub(began)), 1)
	}
	for _, e := range q.order {
		if _, ok := q.live[e.id]; ok {
			t.Entries = append(t.Entries, snapshot.Timer{ID: e.id, At: max(int64(e.at.Sub(began)), 0)})
		}
	}
	slices.SortFunc(t.Entries, func(a, b snapshot.Timer) int { return int(a.ID - b.ID) })
	return t
}

// restoreTimers re-arms a snapshot's timers, relative to began.
func (q *timerQueue) restore(t snapshot.Timers, began time.Time) {
	q.last = t.Last
	if t.Fired > 0 {
		q.fired = began.Add(time.Duration(t.Fired))
	}
	q.live = make(map[int32]struct{}, len(t.Entries))
	for _, e := range t.Entries {
		q.live[e.ID] = struct{}{}
		heap.Push(&q.order, timerEntry{at: began.Add(time.Duration(e.At)), id: e.ID})
	}
}
