package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/wasmhost"
)

// DefaultMaxProgressLines is how many console lines of one run_code call
// are sent as progress notifications when Options.MaxProgressLines is zero.
// A model sees the logs in the result anyway; the notifications are for the
// person watching, and a thousand lines is more than a client shows.
const DefaultMaxProgressLines = 1000

// Bounds on the progress stream of one call, not configurable: a line is
// cut to maxProgressLineBytes (the result keeps it whole), at most
// progressBuffer lines wait for a slow client (later ones are dropped and
// counted, so a program never waits for the client), and the lines still
// queued when the run ends get progressDrain to go out before the result is
// sent without them.
const (
	maxProgressLineBytes = 2048
	progressBuffer       = 64
	progressDrain        = 5 * time.Second
)

// progress streams a run_code program's console lines to the client that
// asked for progress (the request's _meta.progressToken), one
// notifications/progress per line, with the line as its message and the
// count of lines so far as its progress.
type progress struct {
	send   func(context.Context, *mcp.ProgressNotificationParams) error // the session's NotifyProgress
	token  any
	max    int64
	lines  chan string
	queued atomic.Int64 // lines accepted for sending
	lost   atomic.Int64 // lines past max or dropped for a full buffer
	sent   chan struct{}
	cancel context.CancelFunc
	drain  time.Duration // progressDrain

	// mu orders hook against finish: a guest that outlives its run (see
	// wasmhost.Runtime.Run) may still log after the stream has ended.
	mu     sync.Mutex
	closed bool
}

// startProgress returns ctx carrying a wasmhost.LogHook that streams the
// run's lines, and the function that ends the stream once the call has
// settled: it waits (at most progressDrain) for the queued lines, then, if
// lines were left out, sends one notification saying how many and why. A
// request without a progress token gets ctx unchanged and a no-op.
func startProgress(ctx context.Context, req *mcp.CallToolRequest, maxLines int) (context.Context, func()) {
	if req.Session == nil || req.Params == nil || req.Params.GetProgressToken() == nil {
		return ctx, func() {}
	}
	sendCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := newProgress(req.Session.NotifyProgress, req.Params.GetProgressToken(), maxLines, cancel)
	go p.run(sendCtx)
	return wasmhost.WithLogHook(ctx, p.hook), p.finish
}

func newProgress(send func(context.Context, *mcp.ProgressNotificationParams) error, token any, maxLines int, cancel context.CancelFunc) *progress {
	return &progress{
		send: send, token: token, max: int64(maxLines),
		lines: make(chan string, progressBuffer), sent: make(chan struct{}), cancel: cancel, drain: progressDrain,
	}
}

// hook is the run's LogHook: it never blocks.
func (p *progress) hook(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.queued.Load() >= p.max {
		p.lost.Add(1)
		return
	}
	select {
	case p.lines <- text.Truncate(line, maxProgressLineBytes):
		p.queued.Add(1)
	default:
		p.lost.Add(1)
	}
}

// run delivers the queued lines in order. A notification the transport
// refuses ends the stream: the client is gone or broken, and the result
// still carries every line.
func (p *progress) run(ctx context.Context) {
	defer close(p.sent)
	n := 0
	for line := range p.lines {
		n++
		if p.notify(ctx, line, n) != nil {
			for range p.lines {
			}
			return
		}
	}
	if lost := p.lost.Load(); lost > 0 {
		_ = p.notify(ctx, fmt.Sprintf("… %d more console lines were not sent as progress (at most %d are, and none while the client reads slowly); the result has the logs", lost, p.max), n+1)
	}
}

func (p *progress) notify(ctx context.Context, msg string, n int) error {
	return p.send(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Message: msg, Progress: float64(n)})
}

// finish ends the stream: no line is queued after it, and the queued ones
// go out before the call's result unless the client takes longer than the
// drain to read them; then the rest are abandoned (their context is
// cancelled) and the result goes without them.
func (p *progress) finish() {
	p.mu.Lock()
	p.closed = true
	close(p.lines)
	p.mu.Unlock()
	t := time.NewTimer(p.drain)
	defer t.Stop()
	select {
	case <-p.sent:
	case <-t.C:
	}
	p.cancel()
}
