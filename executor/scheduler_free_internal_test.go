package executor

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// gatedScheduler is a scheduler of a run_code execution whose one tool,
// "gated", is concurrency-safe and returns its arguments once release is
// closed (ignoring its context); it tells started, if not nil, as it
// starts.
func gatedScheduler(t *testing.T, ctx context.Context, release <-chan struct{}, started chan<- struct{}) *scheduler {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "gated", ConcurrencySafe: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"}}}`),
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			if started != nil {
				started <- struct{}{}
			}
			<-release
			return api.Output{Value: in.Args}, nil
		}}))
	e, err := New(reg, NewConfig().WithMaxParallel(2*maxFree))
	require.NoError(t, err)
	return newScheduler(ctx, e, e.mintToken("call_test", deploymentScope))
}

// replies is where a test's nested calls answer.
type replies chan wasmhost.CallResult

func (r replies) reply(c wasmhost.CallResult) { r <- c }

func (r replies) await(t *testing.T) wasmhost.CallResult {
	t.Helper()
	select {
	case c := <-r:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("a nested call never answered")
		return wasmhost.CallResult{}
	}
}

func (s *scheduler) freeRecords() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.free)
}

// A burst of parallel calls leaves at most maxFree records for reuse:
// below, at and past the bound.
func TestScheduler_commit_keepsAtMostMaxFreeRecords(t *testing.T) {
	for _, calls := range []int{maxFree - 1, maxFree, maxFree + 1} {
		release := make(chan struct{})
		s := gatedScheduler(t, context.Background(), release, nil)
		answers := make(replies, calls)
		for range calls {
			s.Dispatch("gated", json.RawMessage(`{"i":1}`), answers.reply)
		}
		close(release)
		for range calls {
			require.True(t, answers.await(t).OK)
		}
		s.settle()
		require.Equal(t, min(calls, maxFree), s.freeRecords(), "%d calls", calls)
	}
}

// A program awaiting its calls one at a time (the inline path) reuses one
// record, and a reused record starts from zero: its answer is its own.
func TestScheduler_Idle_reusesTheCommittedRecord(t *testing.T) {
	release := make(chan struct{})
	close(release)
	s := gatedScheduler(t, context.Background(), release, nil)
	s.Flush() // as wasmhost does before the program starts: calls are held for Idle
	answers := make(replies, 1)
	var first *nested
	for i := range 3 {
		s.Dispatch("gated", json.RawMessage(`{"i":`+string(rune('0'+i))+`}`), answers.reply)
		s.mu.Lock()
		n := s.queue[0]
		s.mu.Unlock()
		if first == nil {
			first = n
		}
		require.Same(t, first, n, "call %d", i)
		require.False(t, n.x.ran, "a reused record starts from zero")
		s.Idle(context.Background(), func() { t.Error("handed over") })
		c := answers.await(t)
		require.True(t, c.OK)
		require.JSONEq(t, `{"i":`+string(rune('0'+i))+`}`, string(c.Value))
	}
	s.settle()
}

// A record whose body was given up for (it ignored its context past
// cancelGrace) is never reused: the body still runs on it.
func TestScheduler_commit_neverReusesARecordWhoseBodyWasLost(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	s := gatedScheduler(t, context.Background(), release, started)
	s.Flush()
	answers := make(replies, 1)
	s.Dispatch("gated", json.RawMessage(`{"i":1}`), answers.reply)
	ctx, cancel := context.WithCancel(context.Background())
	handedOver := make(chan struct{})
	idled := make(chan struct{})
	go func() {
		defer close(idled)
		s.Idle(ctx, func() { close(handedOver) })
	}()
	<-started
	cancel()
	select {
	case <-handedOver:
	case <-time.After(10 * time.Second):
		t.Fatal("the stuck body was never given up for")
	}
	require.Equal(t, api.CodeAborted, answers.await(t).Code)
	require.Zero(t, s.freeRecords(), "the lost body's record is not free")
	close(release)
	<-idled
	require.Zero(t, s.freeRecords(), "nor once the body came back")
	s.settle()
}
