package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// stub is a scripted server: each request takes the next answer of its
// route's script, and every request is recorded.
type stub struct {
	mu      sync.Mutex
	scripts map[string][]answer // by route: "start", "results", "get"
	seen    []string            // the routes, in order
	posted  [][]serve.ToolResult
}

type answer struct {
	status     int
	retryAfter string
	body       any
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route := ""
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/executions":
		route = "start"
	case r.Method == http.MethodPost && r.URL.Path == "/v1/executions/x1/tool_results":
		route = "results"
		var req serve.ToolResultsRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.posted = append(s.posted, req.Results)
		s.mu.Unlock()
	case r.Method == http.MethodGet && r.URL.Path == "/v1/executions/x1" && r.URL.Query().Get("wait") == "true":
		route = "get"
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusTeapot)
		return
	}
	s.mu.Lock()
	s.seen = append(s.seen, route)
	script := s.scripts[route]
	if len(script) == 0 {
		s.mu.Unlock()
		http.Error(w, "no answer left for "+route, http.StatusTeapot)
		return
	}
	a := script[0]
	s.scripts[route] = script[1:]
	s.mu.Unlock()
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_ = json.NewEncoder(w).Encode(a.body)
}

func (s *stub) routes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func state(status string, pending ...string) serve.ExecutionState {
	st := serve.ExecutionState{ID: "x1", Status: status}
	for _, id := range pending {
		st.Pending = append(st.Pending, serve.PendingCall{ID: id, Name: "ask"})
	}
	if status == serve.StatusCompleted {
		st.Value = json.RawMessage(`"done"`)
	}
	return st
}

func refusal(status int, code, retryAfter string) answer {
	return answer{status: status, retryAfter: retryAfter, body: serve.ErrorEnvelope{Error: serve.ErrorBody{Code: code, Message: code}}}
}

func ok(st serve.ExecutionState) answer { return answer{status: http.StatusOK, body: st} }

func newStub(t *testing.T, scripts map[string][]answer) (*stub, *client.Client) {
	t.Helper()
	s := &stub{scripts: scripts}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, client.New(srv.URL, "key", srv.Client())
}

// answerAll answers every pending call with its own ID.
func answerAll(_ context.Context, pending []serve.PendingCall) ([]serve.ToolResult, error) {
	var rs []serve.ToolResult
	for _, p := range pending {
		v, _ := json.Marshal(p.ID)
		rs = append(rs, serve.ToolResult{ID: p.ID, OK: true, Value: v})
	}
	return rs, nil
}

func TestClient_Run_drivesAnExecutionToSettlement(t *testing.T) {
	s, c := newStub(t, map[string][]answer{
		"start":   {ok(state(serve.StatusRunning))},
		"get":     {ok(state(serve.StatusPending, "c1", "c2"))},
		"results": {ok(state(serve.StatusRunning)), ok(state(serve.StatusCompleted))},
	})
	s.scripts["get"] = append(s.scripts["get"], ok(state(serve.StatusPending, "c3")))
	st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{Answer: answerAll})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status)
	require.JSONEq(t, `"done"`, string(st.Value))
	require.Equal(t, []string{"start", "get", "results", "get", "results"}, s.routes())
	require.Len(t, s.posted, 2)
	require.Equal(t, []string{"c1", "c2"}, []string{s.posted[0][0].ID, s.posted[0][1].ID})
	require.Equal(t, "c3", s.posted[1][0].ID)
}

func TestClient_Run_returnsAFailedExecutionAsAState(t *testing.T) {
	failed := state(serve.StatusFailed)
	failed.Error = &serve.ErrorBody{Code: "BUSY", Message: "no room"}
	s, c := newStub(t, map[string][]answer{"start": {ok(failed)}})
	st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{})
	require.NoError(t, err, "a failed execution is settled, not an error")
	require.Equal(t, serve.StatusFailed, st.Status)
	require.Equal(t, "BUSY", st.Error.Code)
	require.Equal(t, []string{"start"}, s.routes(), "a failed BUSY is not started again")
}

func TestClient_Run_retriesWhatTheServerSaysToRetry(t *testing.T) {
	s, c := newStub(t, map[string][]answer{
		"start": {
			refusal(http.StatusTooManyRequests, "QUOTA_EXCEEDED", "1"),
			refusal(http.StatusServiceUnavailable, "DRAINING", "1"),
			ok(state(serve.StatusPending, "c1")),
		},
		"results": {
			refusal(http.StatusServiceUnavailable, "BUSY", "1"),
			refusal(http.StatusTooManyRequests, "QUOTA_EXCEEDED", "1"),
			ok(state(serve.StatusCompleted)),
		},
	})
	var retried []string
	st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{
		Answer: answerAll, RetryWait: time.Millisecond,
		Retried: func(e *client.Error) { retried = append(retried, e.Body.Code) },
	})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status)
	require.Equal(t, []string{"QUOTA_EXCEEDED", "DRAINING", "BUSY", "QUOTA_EXCEEDED"}, retried)
	require.Equal(t, []string{"start", "start", "start", "results", "results", "results"}, s.routes())
	require.Len(t, s.posted, 3, "the same results are posted again")
	for _, p := range s.posted {
		require.Equal(t, "c1", p[0].ID)
	}
}

func TestClient_Run_waitsTheServersRetryAfter(t *testing.T) {
	_, c := newStub(t, map[string][]answer{
		"start": {refusal(http.StatusTooManyRequests, "QUOTA_EXCEEDED", "1"), ok(state(serve.StatusCompleted))},
	})
	start := time.Now()
	st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{})
	require.NoError(t, err)
	require.Equal(t, serve.StatusCompleted, st.Status)
	require.GreaterOrEqual(t, time.Since(start), time.Second, "Retry-After: 1 is waited for without RetryWait")
}

func TestClient_Run_returnsAnErrorWithoutRetryAfterAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		scripts map[string][]answer
		routes  []string
		state   bool // Run returns the last state with the error
	}{
		{
			name:    "bad request on the start",
			scripts: map[string][]answer{"start": {refusal(http.StatusBadRequest, "BAD_REQUEST", "")}},
			routes:  []string{"start"},
		},
		{
			name: "results refused",
			scripts: map[string][]answer{
				"start":   {ok(state(serve.StatusPending, "c1"))},
				"results": {refusal(http.StatusBadRequest, "BAD_REQUEST", "")},
			},
			routes: []string{"start", "results"}, state: true,
		},
		{
			name: "the execution gone while running",
			scripts: map[string][]answer{
				"start": {ok(state(serve.StatusRunning))},
				"get":   {refusal(http.StatusNotFound, "NOT_FOUND", "")},
			},
			routes: []string{"start", "get"}, state: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newStub(t, tc.scripts)
			st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{Answer: answerAll, RetryWait: time.Millisecond})
			var e *client.Error
			require.ErrorAs(t, err, &e)
			require.Empty(t, e.RetryAfter)
			require.Equal(t, tc.routes, s.routes())
			if tc.state {
				require.NotNil(t, st)
				require.Equal(t, "x1", st.ID, "the last state names the execution")
			} else {
				require.Nil(t, st)
			}
		})
	}
}

func TestClient_Run_withoutAnAnswer_failsAtThePendingCall(t *testing.T) {
	s, c := newStub(t, map[string][]answer{"start": {ok(state(serve.StatusPending, "c1"))}})
	st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{})
	require.ErrorIs(t, err, client.ErrNoAnswer)
	require.Equal(t, serve.StatusPending, st.Status)
	require.Equal(t, []string{"start"}, s.routes(), "nothing is posted")
}

func TestClient_Run_stopsAtTheAnswersError(t *testing.T) {
	planned := errors.New("the user went away")
	s, c := newStub(t, map[string][]answer{"start": {ok(state(serve.StatusPending, "c1"))}})
	st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{
		Answer: func(context.Context, []serve.PendingCall) ([]serve.ToolResult, error) { return nil, planned },
	})
	require.ErrorIs(t, err, planned)
	require.Equal(t, "x1", st.ID)
	require.Equal(t, []string{"start"}, s.routes())
}

func TestClient_Run_stopsWaitingToRetryWithTheContext(t *testing.T) {
	_, c := newStub(t, map[string][]answer{
		"start": {refusal(http.StatusTooManyRequests, "QUOTA_EXCEEDED", "3600")},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	st, err := c.Run(ctx, serve.ExecutionRequest{Code: "x"}, client.RunOptions{MaxElapsed: 2 * time.Hour})
	require.Nil(t, st)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var e *client.Error
	require.ErrorAs(t, err, &e, "the refusal it was waiting to retry is named")
	require.Equal(t, "QUOTA_EXCEEDED", e.Body.Code)
}

func TestClient_Run_boundsItsRetries(t *testing.T) {
	refusals := func(n int) []answer {
		var a []answer
		for range n {
			a = append(a, refusal(http.StatusTooManyRequests, "QUOTA_EXCEEDED", "1"))
		}
		return append(a, ok(state(serve.StatusCompleted)))
	}
	for _, tc := range []struct {
		name       string
		refusals   int
		maxRetries int
		ok         bool
		starts     int
	}{
		{"at the default bound", client.DefaultMaxRetries, 0, true, client.DefaultMaxRetries + 1},
		{"past the default bound", client.DefaultMaxRetries + 1, 0, false, client.DefaultMaxRetries + 1},
		{"below a bound given", 1, 2, true, 2},
		{"at a bound given", 2, 2, true, 3},
		{"past a bound given", 3, 2, false, 3},
		{"retries off", 1, -1, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newStub(t, map[string][]answer{"start": refusals(tc.refusals)})
			st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{RetryWait: time.Millisecond, MaxRetries: tc.maxRetries})
			require.Len(t, s.routes(), tc.starts)
			if tc.ok {
				require.NoError(t, err)
				require.Equal(t, serve.StatusCompleted, st.Status)
				return
			}
			var e *client.Error
			require.ErrorAs(t, err, &e, "the last refusal is named")
			require.Equal(t, "QUOTA_EXCEEDED", e.Body.Code)
			if tc.maxRetries >= 0 {
				require.ErrorContains(t, err, "RunOptions.MaxRetries")
			}
		})
	}
}

func TestClient_Run_makesNoRetryPastMaxElapsed(t *testing.T) {
	s, c := newStub(t, map[string][]answer{
		"start": {refusal(http.StatusTooManyRequests, "QUOTA_EXCEEDED", "3600"), ok(state(serve.StatusCompleted))},
	})
	start := time.Now()
	st, err := c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{MaxElapsed: time.Second})
	require.Nil(t, st)
	require.ErrorContains(t, err, "past RunOptions.MaxElapsed")
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, []string{"start"}, s.routes(), "a wait past the bound is not started")
	require.Less(t, time.Since(start), time.Minute, "and not waited")

	_, err = c.Run(t.Context(), serve.ExecutionRequest{Code: "x"}, client.RunOptions{MaxElapsed: -time.Second})
	require.ErrorContains(t, err, "RunOptions.MaxElapsed is -1s")
}
