package serve

import (
	"time"

	"github.com/ptcx/ptcx/internal/runners"
)

// runnersMaxIdle bounds the goroutines waiting for an execution at once
// (internal/runners): as many as the bench's serve_rps runs at once, and
// as many again finishing. An execution that finds none waiting starts
// one.
const runnersMaxIdle = 16

// runnersIdleFor is how long one waits for an execution before it exits:
// executions a few a second apart reuse one, and an idle server holds none
// after it.
const runnersIdleFor = 500 * time.Millisecond

// newRunners returns the runners of a server that closes stop.
func newRunners(stop <-chan struct{}) *runners.Runners {
	return runners.New(stop, runnersMaxIdle, runnersIdleFor)
}
