package mcpbridge

import "time"

// The budget for the notifications an upstream sends of its own accord
// (progress, logging, list changes). Its requests (ping) are not budgeted:
// it waits for their answers. The bridge needs no notification to answer
// a call, and each costs the host
// about 100-200 µs of CPU in the SDK, so an upstream flooding them would
// cost the host seconds per call. Within the budget they go to the SDK as
// before; past it they are dropped unread, after a scan of their top-level
// keys (about 1 µs each, less than the upstream spends writing them), and
// counted (Bridge.Dropped). An upstream that floods keeps its session: its
// answers still arrive, and a chatty but correct server loses nothing it
// needs.
const (
	// unsolicitedBurst is how many unsolicited messages may arrive at once.
	unsolicitedBurst = 1000
	// unsolicitedRate is how many per second may arrive after the burst.
	unsolicitedRate = 100
)

// budget is a token bucket of unsolicited messages. It is used by the one
// goroutine that reads the upstream's stdout.
type budget struct {
	now    func() time.Time
	tokens float64
	last   time.Time
}

func newBudget(now func() time.Time) *budget {
	return &budget{now: now, tokens: unsolicitedBurst, last: now()}
}

// take spends one token, or reports that none is left.
func (b *budget) take() bool {
	t := b.now()
	b.tokens = min(unsolicitedBurst, b.tokens+t.Sub(b.last).Seconds()*unsolicitedRate)
	b.last = t
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
