package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

// pingTimeout bounds the ping that decides, after a call timed out, whether
// the upstream is still responsive (at most the call timeout).
const pingTimeout = 5 * time.Second

// body is the registry body of one upstream tool.
func (b *Bridge) body(tool string, hasOutputSchema bool) registry.Body {
	return func(ctx context.Context, in api.Input) (api.Output, error) {
		return b.call(ctx, tool, in.Args, hasOutputSchema)
	}
}

// call sends one tools/call to the upstream, restarting it first if it
// died. The arguments go as the executor validated them. Cancelling ctx
// cancels the request upstream: the SDK sends notifications/cancelled.
func (b *Bridge) call(ctx context.Context, tool string, args json.RawMessage, hasOutputSchema bool) (api.Output, error) {
	if err := b.unlisted(tool); err != nil {
		return api.Output{}, err
	}
	s, err := b.acquire(ctx)
	if err != nil {
		return api.Output{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	res, err := s.cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err == nil {
		s.answered.Store(true)
		return output(b.label, tool, res, hasOutputSchema)
	}

	var werr *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		// The caller gave up; the executor reports that.
		return api.Output{}, context.Cause(ctx)
	case b.isClosing():
		return api.Output{}, api.Errorf(api.CodeToolFailed, "%s was closed while %s ran", b.label, tool)
	case errors.As(err, &werr):
		s.answered.Store(true)
		return api.Output{}, api.Errorf(api.CodeToolFailed, "%s refused the call to %s: %s", b.label, tool, werr.Message)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return api.Output{}, b.timedOut(ctx, s, tool)
	}
	why := s.failure(cctx, err, "the call to "+tool, b.timeout)
	if !s.alive() {
		<-s.done // the message may then say "restarted": nothing of it is left
		return api.Output{}, api.Errorf(api.CodeToolFailed,
			"%s failed while running %s: %s; it will be restarted on the next call", b.label, tool, why)
	}
	return api.Output{}, api.Errorf(api.CodeToolFailed, "%s: the call to %s failed: %s", b.label, tool, why)
}

// timedOut reports a call that did not finish within the timeout. The SDK
// has already cancelled the request upstream. A ping tells a busy upstream
// from a hung one: one that does not answer it either is stopped, and the
// next call starts a new one.
func (b *Bridge) timedOut(ctx context.Context, s *session, tool string) error {
	msg := fmt.Sprintf("%s did not answer %s within %s", b.label, tool, seconds(b.timeout))
	pctx, cancel := context.WithTimeout(ctx, min(b.timeout, pingTimeout))
	err := s.cs.Ping(pctx, nil)
	cancel()
	switch {
	case err == nil:
		msg += "; the request was cancelled"
	case ctx.Err() != nil:
	default:
		s.kill("it stopped answering: a call timed out and a ping got no answer")
		msg += "; it did not answer a ping either, so it was stopped and will be restarted on the next call"
	}
	return &api.Error{Code: api.CodeToolTimeout, Message: msg, Cause: context.DeadlineExceeded}
}

// acquire returns a live session, starting a new upstream when the last one
// died: the restart is lazy, on the next use. An upstream that dies again
// before answering any call after a restart is not restarted at once: from
// the second such death in a row, a restart waits 1s after the previous
// one, then 2s, 4s, ... up to 30s, and calls in between fail at once saying
// so. Any answer resets the count.
func (b *Bridge) acquire(ctx context.Context) (*session, error) {
	select {
	case b.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-b.lock }()
	if b.closed || b.isClosing() {
		return nil, api.Errorf(api.CodeToolFailed, "%s is closed", b.label)
	}
	if s := b.sess; s != nil {
		if s.alive() {
			return s, nil
		}
		b.sess = nil
		<-s.done
		if s.answered.Load() {
			b.deaths = 1
		} else {
			b.deaths++
		}
		b.lastCause = s.deathText()
	}
	if b.deaths >= 2 {
		if wait := b.lastStart.Add(backoff(b.deaths)).Sub(b.now()); wait > 0 {
			return nil, api.Errorf(api.CodeToolFailed,
				"%s stopped again right after it was restarted (%d times in a row; last: %s); it will not be restarted for another %s",
				b.label, b.deaths, b.lastCause, seconds(wait.Round(time.Millisecond)))
		}
	}

	sctx, cancel := b.startContext(ctx)
	defer cancel()
	b.lastStart = b.now()
	s, err := startSession(sctx, b.argv, b.startTimeout, &b.dropped, b.listChanged)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if b.isClosing() {
			return nil, api.Errorf(api.CodeToolFailed, "%s is closed", b.label)
		}
		b.deaths++
		b.lastCause = err.Error()
		return nil, api.Errorf(api.CodeToolFailed, "%s could not be restarted: %v", b.label, err)
	}
	b.sess = s
	return s, nil
}

// startContext is ctx, also cancelled when Close is called.
func (b *Bridge) startContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-b.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// backoff is how long after the previous restart the next may happen, for
// the given number of deaths in a row (2 or more).
func backoff(deaths int) time.Duration {
	const maxBackoff = 30 * time.Second
	d := time.Second
	for i := 2; i < deaths && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}
