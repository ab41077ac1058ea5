package serve

import (
	"context"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
)

// pendingStore counts the executions that may wait on their client
// (against quotas.max_pending), parked (park.go) or live, and holds the
// live ones: a client tool's body that was dispatched (beside an in-flight
// server-side call, where parking cannot be used) waits here, its guest
// instance blocked in it, until answered or expired.
type pendingStore interface {
	// reserve admits one execution that may wait on its client, within
	// limit for the tenant; release it when the execution settles.
	reserve(tenant string, limit int) (release func(), ok bool)
	// await blocks until pc is answered, expires or ctx ends.
	await(ctx context.Context, pc *pendingCall) (ToolResult, error)
	// held is how many executions are reserved now, over all tenants.
	held() int
}

// liveStore holds pending executions live, counted per tenant.
type liveStore struct {
	mu     sync.Mutex
	counts map[string]int
	total  int
}

func newLiveStore() *liveStore { return &liveStore{counts: map[string]int{}} }

func (s *liveStore) reserve(tenant string, limit int) (func(), bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts[tenant] >= limit {
		return nil, false
	}
	s.counts[tenant]++
	s.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.counts[tenant]--
			s.total--
		})
	}, true
}

func (s *liveStore) await(ctx context.Context, pc *pendingCall) (ToolResult, error) {
	timer := time.NewTimer(time.Until(pc.expires))
	defer timer.Stop()
	select {
	case r := <-pc.answer:
		return r, nil
	case <-timer.C:
		return ToolResult{}, api.Errorf(api.CodeToolTimeout,
			"the client did not answer %s (call %s) before it expired at %s", pc.call.Name, pc.call.ID, pc.expires.UTC().Format(time.RFC3339))
	case <-ctx.Done():
		return ToolResult{}, ctx.Err()
	}
}

func (s *liveStore) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
