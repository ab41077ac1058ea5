// Package client is a Go client of `ptcx serve` (docs/service.md). A Client is
// safe for concurrent use.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/protocol"
)

// maxResponseBytes bounds a response body the client reads.
const maxResponseBytes = 64 << 20

// Client talks to one server with one tenant's key.
type Client struct {
	base string
	key  string
	http *http.Client
}

// New returns a client of the server at base (e.g. http://127.0.0.1:8080)
// with the tenant API key key; hc nil means http.DefaultClient.
func New(base, key string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(base, "/"), key: key, http: hc}
}

// Error is a non-2xx answer.
type Error struct {
	Status     int
	Body       protocol.ErrorBody
	RetryAfter string
}

func (e *Error) Error() string {
	return fmt.Sprintf("ptcx serve: %d %s: %s", e.Status, e.Body.Code, e.Body.Message)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
		var env protocol.ErrorEnvelope
		if json.Unmarshal(data, &env) == nil {
			e.Body = env.Error
		} else {
			e.Body.Message = string(data)
		}
		return e
	}
	if out == nil { // an answer without a body (204)
		return nil
	}
	return json.Unmarshal(data, out)
}

// Execute starts an execution (POST /v1/executions).
func (c *Client) Execute(ctx context.Context, req protocol.ExecutionRequest) (*protocol.ExecutionState, error) {
	var st protocol.ExecutionState
	return &st, c.do(ctx, http.MethodPost, "/v1/executions", req, &st)
}

// Plan reads a program without running it and returns its plan (POST
// /v1/plans); an execution with the plan, once approved, runs only that
// program and only the calls it allows (ExecutionRequest.Plan).
func (c *Client) Plan(ctx context.Context, req protocol.PlanRequest) (*api.Plan, error) {
	var p api.Plan
	return &p, c.do(ctx, http.MethodPost, "/v1/plans", req, &p)
}

// ToolResults answers pending calls (POST /v1/executions/{id}/tool_results).
func (c *Client) ToolResults(ctx context.Context, id string, results ...protocol.ToolResult) (*protocol.ExecutionState, error) {
	var st protocol.ExecutionState
	return &st, c.do(ctx, http.MethodPost, "/v1/executions/"+id+"/tool_results", protocol.ToolResultsRequest{Results: results}, &st)
}

// Decide decides pending approvals (POST /v1/executions/{id}/approvals):
// the pending items of kind "approval". Approved, a call runs and the
// program continues; declined, the program's promise rejects with DENIED
// and the reason. Deciding an approval again the same way is a no-op; the
// other way is a 409 (*Error).
func (c *Client) Decide(ctx context.Context, id string, decisions ...protocol.Decision) (*protocol.ExecutionState, error) {
	var st protocol.ExecutionState
	return &st, c.do(ctx, http.MethodPost, "/v1/executions/"+id+"/approvals", protocol.ApprovalsRequest{Decisions: decisions}, &st)
}

// Get returns an execution's state; wait asks the server to wait until it
// is no longer running (at most server.max_wait_ms).
func (c *Client) Get(ctx context.Context, id string, wait bool) (*protocol.ExecutionState, error) {
	var st protocol.ExecutionState
	q := ""
	if wait {
		q = "?wait=true"
	}
	return &st, c.do(ctx, http.MethodGet, "/v1/executions/"+id+q, nil, &st)
}

// Handle returns the value of a handle a completed execution's result holds
// (GET /v1/executions/{id}/handles/{handle}); ExecutionState.Handles lists
// them. One the result does not hold is a 404 *Error; in a cluster, one
// whose value lived on a node that is gone is a 410 *Error (code GONE).
func (c *Client) Handle(ctx context.Context, id, handle string) (*protocol.HandleValue, error) {
	var h protocol.HandleValue
	return &h, c.do(ctx, http.MethodGet, "/v1/executions/"+url.PathEscape(id)+"/handles/"+url.PathEscape(handle), nil, &h)
}

// Cancel cancels an execution (DELETE /v1/executions/{id}).
func (c *Client) Cancel(ctx context.Context, id string) (*protocol.ExecutionState, error) {
	var st protocol.ExecutionState
	return &st, c.do(ctx, http.MethodDelete, "/v1/executions/"+id, nil, &st)
}

// DeleteSession ends a keep_state session of scope ("" for the
// deployment's), deleting its saved state (DELETE /v1/sessions/{name}); a
// session that does not exist is a 404 *Error.
func (c *Client) DeleteSession(ctx context.Context, scope, name string) error {
	path := "/v1/sessions/" + url.PathEscape(name)
	if scope != "" {
		path += "?scope=" + url.QueryEscape(scope)
	}
	return c.do(ctx, http.MethodDelete, path, nil, nil)
}

// Call makes a model-direct call (POST /v1/calls).
func (c *Client) Call(ctx context.Context, name string, args json.RawMessage) (*protocol.CallResponse, error) {
	var out protocol.CallResponse
	return &out, c.do(ctx, http.MethodPost, "/v1/calls", protocol.CallRequest{Name: name, Arguments: args}, &out)
}

// Events reads an execution's event stream after event lastID until the
// stream ends (after the done event) or ctx ends.
func (c *Client) Events(ctx context.Context, id string, lastID int) ([]protocol.Event, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/executions/"+id+"/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.Itoa(lastID))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var env protocol.ErrorEnvelope
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		_ = json.Unmarshal(data, &env)
		return nil, &Error{Status: resp.StatusCode, Body: env.Error}
	}
	return readEvents(resp.Body)
}

func readEvents(r io.Reader) ([]protocol.Event, error) {
	var (
		out []protocol.Event
		cur protocol.Event
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxResponseBytes)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Type != "" {
				out = append(out, cur)
			}
			cur = protocol.Event{}
		case strings.HasPrefix(line, "id: "):
			n, err := strconv.Atoi(strings.TrimPrefix(line, "id: "))
			if err != nil {
				return out, fmt.Errorf("event id %q: %w", line, err)
			}
			cur.ID = n
		case strings.HasPrefix(line, "event: "):
			cur.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		}
	}
	return out, sc.Err()
}
