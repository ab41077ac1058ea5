// Package timers is a run's queue of setTimeout timers: earliest first, ties
// in the order they were set, at most abi.MaxTimers, kept across a
// suspension (Snapshot, Restore).
package timers

import (
	"container/heap"
	"slices"
	"time"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// Queue holds a run's pending setTimeout timers, earliest first (ties
// in the order they were set). Cleared timers are dropped lazily. It is
// used by the run's goroutine only.
type Queue struct {
	fired time.Time // the deadline of the last timer fired
	last  int32
	live  map[int32]struct{}
	order queueHeap
}

type entry struct {
	at time.Time
	id int32
}

// Add schedules a timer delay milliseconds after now and returns its id,
// or false when abi.MaxTimers are already pending.
func (q *Queue) Add(now time.Time, delay int32) (int32, bool) {
	if len(q.live) >= abi.MaxTimers {
		return 0, false
	}
	if q.live == nil {
		q.live = make(map[int32]struct{})
	}
	q.last++
	q.live[q.last] = struct{}{}
	heap.Push(&q.order, entry{at: now.Add(time.Duration(delay) * time.Millisecond), id: q.last})
	if len(q.order) > 2*len(q.live)+64 {
		q.compact()
	}
	return q.last, true
}

// Clear cancels timer id; unknown ids are ignored.
func (q *Queue) Clear(id int32) { delete(q.live, id) }

// Len returns the number of pending timers.
func (q *Queue) Len() int { return len(q.live) }

// Next returns the earliest pending deadline, if any.
func (q *Queue) Next() (time.Time, bool) {
	q.dropCleared()
	if len(q.order) == 0 {
		return time.Time{}, false
	}
	return q.order[0].at, true
}

// Due removes and returns the earliest timer whose deadline is not after now.
func (q *Queue) Due(now time.Time) (int32, bool) {
	q.dropCleared()
	if len(q.order) == 0 || q.order[0].at.After(now) {
		return 0, false
	}
	e := heap.Pop(&q.order).(entry)
	delete(q.live, e.id)
	q.fired = e.at
	return e.id, true
}

// VirtualNow is the time a deterministic run's timers count from: the
// deadline of the last timer fired, else the run's start. It advances only
// as timers fire, so the order in which timers fire depends on their delays
// and the order they were set in, never on how long the guest computed or
// waited meanwhile; a timer still waits until its deadline in real time,
// and fires at once when real time is past it.
func (q *Queue) VirtualNow(start time.Time) time.Time {
	if q.fired.IsZero() {
		return start
	}
	return q.fired
}

func (q *Queue) dropCleared() {
	for len(q.order) > 0 {
		if _, ok := q.live[q.order[0].id]; ok {
			return
		}
		heap.Pop(&q.order)
	}
}

func (q *Queue) compact() {
	kept := q.order[:0]
	for _, e := range q.order {
		if _, ok := q.live[e.id]; ok {
			kept = append(kept, e)
		}
	}
	q.order = kept
	heap.Init(&q.order)
}

type queueHeap []entry

func (h queueHeap) Len() int { return len(h) }
func (h queueHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].id < h[j].id
	}
	return h[i].at.Before(h[j].at)
}
func (h queueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *queueHeap) Push(x any)   { *h = append(*h, x.(entry)) }
func (h *queueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Snapshot lists the pending timers, their deadlines relative to began.
func (q *Queue) Snapshot(began time.Time) snapshot.Timers {
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
func (q *Queue) Restore(t snapshot.Timers, began time.Time) {
	q.last = t.Last
	if t.Fired > 0 {
		q.fired = began.Add(time.Duration(t.Fired))
	}
	q.live = make(map[int32]struct{}, len(t.Entries))
	for _, e := range t.Entries {
		q.live[e.ID] = struct{}{}
		heap.Push(&q.order, entry{at: began.Add(time.Duration(e.At)), id: e.ID})
	}
}
