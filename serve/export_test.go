package serve

import (
	"sync"

	"github.com/ptcx/ptcx/wasmhost"
)

// Routes returns the method and path of every route s serves.
func Routes(s *Server) [][2]string {
	var out [][2]string
	for _, r := range s.routeTable() {
		out = append(out, [2]string{r.method, r.path})
	}
	return out
}

// SandboxUsage is the counters of the Runtime s started (zero when it was
// given one).
func SandboxUsage(s *Server) wasmhost.Usage {
	if s.own == nil {
		return wasmhost.Usage{}
	}
	return s.own.Usage()
}

// FillConcurrent takes every concurrent slot of tenant's quota beside what
// it holds (as if max_concurrent more runs were in flight), until the
// returned function gives them back.
func FillConcurrent(s *Server, tenant string) func() {
	q := s.tenantNamed(tenant).quota
	return q.Occupy(q.Limits().MaxConcurrent)
}

// ClientExecutors is how many executors tenant keeps by client tools
// (clienttool_cache.go).
func ClientExecutors(s *Server, tenant string) int { return s.tenantNamed(tenant).clients.len() }

// SetMaxClientExecutors lowers maxClientExecutors to n until the returned
// function restores it.
func SetMaxClientExecutors(n int) func() {
	was := maxClientExecutors
	maxClientExecutors = n
	return func() { maxClientExecutors = was }
}

// HeldPrograms is how many of s's parked executions hold their program in
// memory (its whole snapshot, uncompressed), rather than only the name of
// their bytes in the store or the spill directory.
func HeldPrograms(s *Server) int {
	n := 0
	for _, x := range s.table.Live() {
		x.mu.Lock()
		if x.parkedLocked() && x.parked != nil {
			n++
		}
		x.mu.Unlock()
	}
	return n
}

// HoldSpillRemovals blocks every removal of a spilled file in this process
// until release is called.
func HoldSpillRemovals() (release func()) {
	ch := make(chan struct{})
	f := func() { <-ch }
	removeHook.Store(&f)
	return sync.OnceFunc(func() {
		removeHook.Store(nil)
		close(ch)
	})
}

// WaitingRunners is how many of s's runners wait for an execution
// (runners.go).
func WaitingRunners(s *Server) int { return s.runners.Waiting() }

// RunnersMaxIdle is runnersMaxIdle.
const RunnersMaxIdle = runnersMaxIdle
