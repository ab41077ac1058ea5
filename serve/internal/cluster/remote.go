package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// The operations one node asks of an execution's owner.
const (
	OpCancel    = "cancel"
	OpResults   = "results"
	OpApprovals = "approvals"
	OpHandle    = "handle" // a chunk of a handle's value (handles.go)
)

// NodeRequest is what a node sends to an execution's owner on
// SUBJECT.node.OWNER: a DELETE, a tool_results or an approvals it
// received, or a read of a handle's value.
type NodeRequest struct {
	Op      string                `json:"op"`
	Tenant  string                `json:"tenant"`
	ID      string                `json:"id"`
	Results []protocol.ToolResult `json:"results,omitempty"`
	// Decisions are an approvals request's (OpApprovals).
	Decisions []protocol.Decision `json:"decisions,omitempty"`
	// Handle names the handle an OpHandle reads, from byte Offset of its
	// value.
	Handle string `json:"handle,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// nodeReply is the owner's answer: the HTTP status and body to pass on.
type nodeReply struct {
	Status       int             `json:"status"`
	Body         json.RawMessage `json:"body"`
	RetryAfterMS int64           `json:"retry_after_ms,omitempty"`
}

// onRequest answers another node's request for one of this node's
// executions, each on its own goroutine (at most maxAnswers at once).
func (c *Cluster) onRequest(m *nats.Msg) {
	select {
	case c.answers <- struct{}{}:
	default:
		e := httperr.Unavailable(httperr.CodeOwnerUnavailable, "the owner node %s is answering %d forwarded requests, its maximum; retry", c.Node, maxAnswers)
		c.reply(m, nodeReply{Status: e.Status, RetryAfterMS: e.RetryAfter.Milliseconds(), Body: envelope(e)})
		return
	}
	go func() {
		defer func() { <-c.answers }()
		c.reply(m, c.answer(m.Data))
	}()
}

// decodeNodeRequest decodes and checks a forwarded request.
func decodeNodeRequest(data []byte) (NodeRequest, error) {
	var req NodeRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return req, fmt.Errorf("a forwarded request that is not JSON: %w", err)
	}
	if req.Op != OpCancel && req.Op != OpResults && req.Op != OpApprovals && req.Op != OpHandle {
		return req, fmt.Errorf("a forwarded request with op %q: want cancel, results, approvals or handle", req.Op)
	}
	if req.ID == "" || req.Tenant == "" {
		return req, errors.New("a forwarded request without id or tenant")
	}
	if req.Op == OpHandle && (req.Handle == "" || req.Offset < 0) {
		return req, fmt.Errorf("a forwarded handle read of handle %q from byte %d", req.Handle, req.Offset)
	}
	return req, nil
}

func (c *Cluster) answer(data []byte) nodeReply {
	req, err := decodeNodeRequest(data)
	if err != nil {
		e := httperr.Errorf(httperr.CodeBadRequest, "%v", err)
		return nodeReply{Status: e.Status, Body: envelope(e)}
	}
	x := c.n.Get(req.Tenant, req.ID)
	if x == nil && c.awaitTakeOver(req.ID) { // claimed here, not yet held
		x = c.n.Get(req.Tenant, req.ID)
	}
	if req.Op == OpHandle {
		// A read, of a completed execution (the asking node read its
		// record: this node wrote it so, under a lease it held then): no
		// fence to pass.
		return c.answerHandle(x, req)
	}
	if x == nil {
		e := httperr.NotFound(req.ID)
		return nodeReply{Status: e.Status, Body: envelope(e)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.MaxWait)
	defer cancel()
	if !c.Current(x) { // held from an ended epoch (fence.go)
		var herr *httperr.Error
		if x, herr = c.stale(ctx, x); herr != nil {
			return nodeReply{Status: herr.Status, Body: envelope(herr), RetryAfterMS: herr.RetryAfter.Milliseconds()}
		}
	}
	st, herr := c.n.Apply(ctx, x, req)
	if herr != nil {
		return nodeReply{Status: herr.Status, Body: envelope(herr), RetryAfterMS: herr.RetryAfter.Milliseconds()}
	}
	b, _ := json.Marshal(st)
	return nodeReply{Status: http.StatusOK, Body: b}
}

func (c *Cluster) reply(m *nats.Msg, r nodeReply) {
	b, _ := json.Marshal(r)
	_ = m.Respond(b)
}

func envelope(e *httperr.Error) json.RawMessage {
	b, _ := json.Marshal(protocol.ErrorEnvelope{Error: e.Body})
	return b
}

// Record returns tenant's execution id from the store: 404 for an
// unknown one or another tenant's, 503 when the store fails.
func (c *Cluster) Record(ctx context.Context, tenant, id string) (store.Record, *httperr.Error) {
	if c.isEvicting(id) { // forgotten here; its record is being deleted
		return store.Record{}, httperr.NotFound(id)
	}
	r, err := c.Store.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.Tenant != tenant) {
		return store.Record{}, httperr.NotFound(id)
	}
	if err != nil {
		return store.Record{}, httperr.StoreUnavailable(err)
	}
	return r, nil
}

// RemoteState answers GET for an execution another node owns; with
// wait, it re-reads the record until it is no longer running, at most
// server.max_wait_ms.
func (c *Cluster) RemoteState(ctx context.Context, tenant, id string, wait bool) (json.RawMessage, *httperr.Error) {
	deadline := time.Now().Add(c.MaxWait)
	for {
		r, herr := c.Record(ctx, tenant, id)
		if herr != nil {
			return nil, herr
		}
		if !wait || r.Status != protocol.StatusRunning || time.Now().After(deadline) {
			return r.State, nil
		}
		select {
		case <-ctx.Done():
			return r.State, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Forward sends a DELETE or tool_results for an execution another node
// owns to that node and relays its answer. An owner that does not answer
// is waited for until its lease expires (503 with Retry-After); then its
// executions are reaped and the record's state is the answer.
func (c *Cluster) Forward(ctx context.Context, w http.ResponseWriter, req NodeRequest) {
	c.forwardWith(ctx, w, req, true)
}

// forwardOnce is forward after a lost race to take an execution over: its
// new owner answers, or its state does; it is not taken over again.
func (c *Cluster) forwardOnce(ctx context.Context, w http.ResponseWriter, req NodeRequest) {
	c.forwardWith(ctx, w, req, false)
}

func (c *Cluster) forwardWith(ctx context.Context, w http.ResponseWriter, req NodeRequest, again bool) {
	if x := c.n.Local(req.Tenant, req.ID); x != nil { // taken over meanwhile, by this node
		st, herr := c.n.Apply(ctx, x, req)
		if herr != nil {
			httperr.Write(w, herr)
			return
		}
		httperr.WriteJSON(w, http.StatusOK, st)
		return
	}
	r, herr := c.Record(ctx, req.Tenant, req.ID)
	if herr != nil {
		httperr.Write(w, herr)
		return
	}
	if r.Status == protocol.StatusCompleted || r.Status == protocol.StatusFailed {
		if req.Op == OpCancel {
			httperr.Write(w, httperr.AlreadySettled(r.ID, r.Status))
			return
		}
		httperr.WriteRaw(w, http.StatusOK, r.State)
		return
	}
	if r.Owner == "" {
		c.forwardQueued(ctx, w, req, r)
		return
	}
	if c.nc == nil || r.Owner == c.Node {
		// Owned by this node's earlier life (a restart), or by this node
		// under an ended epoch (fence.go), or by a dir store's node
		// that is gone: nothing can answer, so it is continued here if
		// parked, else lost; once this node proves its lease again.
		if !c.Fence.Live() {
			httperr.Write(w, httperr.Unavailable(httperr.CodeOwnerUnavailable, "%s; retry", c.Fence.Refusal()))
			return
		}
		c.lost(ctx, w, r, req, again)
		return
	}
	b, _ := json.Marshal(req)
	rctx, cancel := context.WithTimeout(ctx, c.MaxWait+5*time.Second)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, c.nodeSubject(r.Owner), b)
	if err == nil {
		var rep nodeReply
		if err := json.Unmarshal(m.Data, &rep); err == nil && rep.Status != 0 {
			if rep.RetryAfterMS > 0 {
				w.Header().Set("Retry-After", fmt.Sprint(max((rep.RetryAfterMS+999)/1000, 1)))
			}
			httperr.WriteRaw(w, rep.Status, rep.Body)
			return
		}
	}
	if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) && err != nil {
		httperr.Write(w, httperr.StoreUnavailable(err))
		return
	}
	c.ownerSilent(ctx, w, r, req, again)
}

// ownerSilent answers for an owner that did not respond: 503 until its
// lease expires (plus the margin: gone), then the execution is failed
// (NODE_LOST) and returned.
func (c *Cluster) ownerSilent(ctx context.Context, w http.ResponseWriter, r store.Record, req NodeRequest, again bool) {
	leases, err := c.Store.Leases(ctx)
	if err != nil {
		httperr.Write(w, httperr.StoreUnavailable(err))
		return
	}
	for _, l := range leases {
		if l.Node == r.Owner && !c.gone(l, time.Now()) {
			lost := l.Until.Add(c.Fence.Margin())
			e := httperr.Errorf(httperr.CodeOwnerUnavailable,
				"execution %s is owned by node %s, which does not answer; it is lost at %s (its lease's expiry plus the margin) unless it renews: retry then (a parked execution is then continued by the node that takes it over, a running one is reported failed, NODE_LOST)",
				r.ID, r.Owner, lost.UTC().Format(time.RFC3339Nano))
			e.RetryAfter = time.Until(lost)
			httperr.Write(w, e)
			return
		}
	}
	c.lost(ctx, w, r, req, again)
}

// lost answers for an execution of a node that is gone: a parked one is
// taken over and req applied to it here; any other is failed (NODE_LOST)
// and its state answered.
func (c *Cluster) lost(ctx context.Context, w http.ResponseWriter, r store.Record, req NodeRequest, again bool) {
	if isParkedRecord(r) && !again { // a takeover raced it, and it is not held yet: its state would drop req
		e := httperr.Unavailable(httperr.CodeOwnerUnavailable, "execution %s is being taken over by another node: retry", r.ID)
		httperr.Write(w, e)
		return
	}
	if isParkedRecord(r) {
		x, err := c.TakeOver(ctx, r)
		if errors.Is(err, store.ErrConflict) || errors.Is(err, errTakeOverRefused) {
			// Another node took it over (or settled it) first, or it was
			// failed here, its bytes not its own: ask again.
			c.forwardOnce(ctx, w, req)
			return
		}
		if err != nil {
			httperr.Write(w, httperr.StoreUnavailable(err))
			return
		}
		st, herr := c.n.Apply(ctx, x, req)
		if herr != nil {
			httperr.Write(w, herr)
			return
		}
		httperr.WriteJSON(w, http.StatusOK, st)
		return
	}
	if err := c.reap(ctx, store.Lease{Node: r.Owner}, "is gone"); err != nil {
		httperr.Write(w, httperr.StoreUnavailable(err))
		return
	}
	now, herr := c.Record(ctx, r.Tenant, r.ID)
	if herr != nil {
		httperr.Write(w, herr)
		return
	}
	httperr.WriteRaw(w, http.StatusOK, now.State)
}
