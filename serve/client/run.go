package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ptcx/ptcx/serve/protocol"
)

// Answer returns the results of an execution's pending client-side calls,
// one for each call it is given (matched by ID). An error stops Run, which
// returns it and leaves the execution pending.
type Answer func(ctx context.Context, pending []protocol.PendingCall) ([]protocol.ToolResult, error)

// RunOptions are Run's.
type RunOptions struct {
	// Answer answers the execution's client-side calls each time it is
	// pending. Nil is for programs of no client-side tools: Run then
	// fails with ErrNoAnswer at the first pending call.
	Answer Answer

	// Decide decides the execution's pending approvals (items of kind
	// "approval") each time it is pending on some, one decision for each
	// (matched by ID); an error stops Run as Answer's does. Nil: Run
	// fails with ErrNoDecision at the first pending approval.
	Decide func(ctx context.Context, approvals []protocol.PendingCall) ([]protocol.Decision, error)

	// RetryWait is the wait before retrying an answer the server says to
	// retry. Zero means the answer's Retry-After (one second where it
	// names none).
	RetryWait time.Duration

	// MaxRetries bounds the retries of each request Run sends: zero means
	// DefaultMaxRetries, a negative value turns retries off (the first
	// error is returned). The TypeScript and Python clients have the same
	// bound, with the same default.
	MaxRetries int

	// MaxElapsed bounds the time from a request's first attempt past
	// which Run makes no retry of it: a wait that would end later is not
	// started, and the error it would have retried is returned at once. A
	// Retry-After is never shortened to fit. Zero means DefaultMaxElapsed;
	// a negative value is refused.
	MaxElapsed time.Duration

	// Retried, when not nil, is called with each error Run retries,
	// before its wait.
	Retried func(*Error)
}

// DefaultMaxRetries and DefaultMaxElapsed are the bounds of a request's
// retries when RunOptions leaves them zero.
const (
	DefaultMaxRetries = 5
	DefaultMaxElapsed = time.Minute
)

// ErrNoAnswer is Run's error for a pending execution when RunOptions has
// no Answer.
var ErrNoAnswer = errors.New("ptcx serve client: the execution is pending on client-side calls and RunOptions.Answer is nil")

// ErrNoDecision is Run's error for an execution pending on an approval
// when RunOptions has no Decide.
var ErrNoDecision = errors.New("ptcx serve client: the execution is pending on approvals and RunOptions.Decide is nil")

// Run starts an execution and drives it until it settles: each time it is
// pending, Run posts o.Decide's decisions for its approvals, or else
// o.Answer's results for its client-side calls; while it runs, Run
// waits for it (GET ?wait=true, again until it is no longer running). It
// returns the settled state, completed or failed: a failed execution is a
// state, not an error.
//
// An error answer that carries Retry-After is retried after that wait (or
// o.RetryWait), within o.MaxRetries and o.MaxElapsed: the server gives it only where nothing was done and the
// same request may be sent again (docs/service.md, "Requests and errors"): on the start a
// 429 QUOTA_EXCEEDED, a 503 DRAINING or STORE_UNAVAILABLE, a 409 CONFLICT of
// a busy session; on the results a 429 max_concurrent or a 503 BUSY or
// STORE_UNAVAILABLE, after which the execution stays pending with the
// results kept. Every other error is returned at once,
// with the execution's last state when there is one (its ID to Get or
// Cancel). Run stops with ctx, and returns ctx's error.
//
// An execution that failed BUSY (the sandbox had no room within its
// admission wait; nothing ran) is settled, and Run returns it: starting it
// again is the caller's choice, since the request may carry an
// idempotency_key, which would return the same failed execution.
func (c *Client) Run(ctx context.Context, req protocol.ExecutionRequest, o RunOptions) (*protocol.ExecutionState, error) {
	if o.MaxElapsed < 0 {
		return nil, fmt.Errorf("ptcx serve client: RunOptions.MaxElapsed is %v: it must be zero (the default, %v) or positive", o.MaxElapsed, DefaultMaxElapsed)
	}
	var st *protocol.ExecutionState
	err := c.retry(ctx, o, func() (err error) {
		st, err = c.Execute(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	for {
		switch st.Status {
		case protocol.StatusPending:
			var calls, approvals []protocol.PendingCall
			for _, p := range st.Pending {
				if p.Kind == protocol.KindApproval {
					approvals = append(approvals, p)
				} else {
					calls = append(calls, p)
				}
			}
			if len(approvals) > 0 {
				if o.Decide == nil {
					return st, ErrNoDecision
				}
				decisions, err := o.Decide(ctx, approvals)
				if err != nil {
					return st, err
				}
				id, last := st.ID, st
				if err = c.retry(ctx, o, func() (err error) {
					st, err = c.Decide(ctx, id, decisions...)
					return err
				}); err != nil {
					return last, err
				}
				continue
			}
			if o.Answer == nil {
				return st, ErrNoAnswer
			}
			results, err := o.Answer(ctx, calls)
			if err != nil {
				return st, err
			}
			id, last := st.ID, st
			err = c.retry(ctx, o, func() (err error) {
				st, err = c.ToolResults(ctx, id, results...)
				return err
			})
			if err != nil {
				return last, err
			}
		case protocol.StatusRunning:
			id, last := st.ID, st
			var err error
			if st, err = c.Get(ctx, id, true); err != nil {
				return last, err
			}
		default:
			return st, nil
		}
	}
}

// retry calls do until it succeeds, fails with an error the server does
// not say to retry, has been retried o.MaxRetries times, would wait past
// o.MaxElapsed from its first attempt, or ctx ends.
func (c *Client) retry(ctx context.Context, o RunOptions, do func() error) error {
	maxRetries, maxElapsed := o.MaxRetries, o.MaxElapsed
	if maxRetries == 0 {
		maxRetries = DefaultMaxRetries
	}
	if maxElapsed == 0 {
		maxElapsed = DefaultMaxElapsed
	}
	deadline := time.Now().Add(maxElapsed)
	for retries := 0; ; retries++ {
		err := do()
		var e *Error
		if !errors.As(err, &e) || e.RetryAfter == "" {
			return err
		}
		if maxRetries < 0 {
			return err // retries are off
		}
		if retries >= maxRetries {
			return fmt.Errorf("ptcx serve client: gave up after %d retries (RunOptions.MaxRetries): %w", retries, err)
		}
		wait := o.RetryWait
		if wait <= 0 {
			wait = retryAfter(e.RetryAfter)
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("ptcx serve client: gave up: the server asks to wait %v, past RunOptions.MaxElapsed (%v) from the first attempt: %w", wait, maxElapsed, err)
		}
		if o.Retried != nil {
			o.Retried(e)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("ptcx serve client: stopped waiting to retry (%w): %w", err, ctx.Err())
		}
	}
}

// maxRetryAfter bounds a wait a server's Retry-After asks for.
const maxRetryAfter = time.Hour

// retryAfter is the wait a Retry-After header value asks for: whole
// seconds (the form the server sends), or an HTTP date; one second where
// it is neither, and at most maxRetryAfter.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return time.Second
		}
		return min(time.Duration(min(n, int64(maxRetryAfter/time.Second)))*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), maxRetryAfter)
	}
	return time.Second
}
