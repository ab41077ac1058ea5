package wasmhost

import (
	"context"
	"sync"
)

// liveSessions lists a Runtime's live idle sessions, least recently given
// back first: their instances are charged to admission's committed memory
// (as pooled instances are), so a run that does not fit beside them makes
// the oldest suspend to bytes (yield) instead of waiting. The zero value
// is empty and ready.
type liveSessions struct {
	mu   sync.Mutex
	list []*Session
}

func (l *liveSessions) add(s *Session) {
	l.mu.Lock()
	l.list = append(l.list, s)
	l.mu.Unlock()
}

func (l *liveSessions) remove(s *Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, o := range l.list {
		if o == s {
			l.list = append(l.list[:i], l.list[i+1:]...)
			return
		}
	}
}

// yield suspends the least recently used live idle session to bytes,
// releasing its instance's memory; it reports whether one was. A nil l
// has none.
func (l *liveSessions) yield() bool {
	for l != nil {
		l.mu.Lock()
		if len(l.list) == 0 {
			l.mu.Unlock()
			return false
		}
		s := l.list[0]
		l.list = l.list[1:]
		l.mu.Unlock()
		if s.yieldMemory() {
			return true
		}
	}
	return false
}

// yieldMemory suspends s to bytes if it is live and idle, for a run that
// needs its memory; a state that cannot be captured is dropped, and the
// next run is told (Notice).
func (s *Session) yieldMemory() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy || s.inst == nil {
		return false
	}
	inst := s.inst
	inst.memory.spares = nil // its reservation goes, not to the pool: the run being admitted needs the memory
	s.dropLive()
	// The run being admitted is the Runtime's own caller: closing the
	// instance waits on nothing that a context would cancel.
	ctx := context.Background()
	if !s.rt.acquire() {
		inst.close(ctx)
		return true
	}
	defer s.rt.done()
	b, err := s.rt.captureSession(inst)
	inst.close(ctx)
	if err != nil {
		s.notice = "the session's state was dropped: it was suspended to make room for another run, and that failed (" + err.Error() + ")"
		return true
	}
	s.saved = b
	return true
}

// SessionStats describes a Runtime's live idle sessions, for metrics and
// tests: their instances are charged to the committed memory cap (as the
// pool's are: not in Usage().CommittedBytes).
type SessionStats struct {
	Live  int   // sessions holding a live instance between runs
	Bytes int64 // what those instances are charged to the committed memory cap
}

// SessionStats returns the counters of rt's live idle sessions, those of
// its Python programs included.
func (rt *Runtime) SessionStats() SessionStats {
	var st SessionStats
	rt.sessions.count(&st)
	if rt.parent == nil {
		rt.otherSessions().count(&st)
	}
	return st
}

// count adds the counters of l's sessions to st. A nil l has none.
func (l *liveSessions) count(st *SessionStats) {
	if l == nil {
		return
	}
	l.mu.Lock()
	list := append([]*Session(nil), l.list...)
	l.mu.Unlock()
	for _, s := range list {
		s.mu.Lock()
		if s.charged > 0 {
			st.Live++
			st.Bytes += s.charged
		}
		s.mu.Unlock()
	}
}
