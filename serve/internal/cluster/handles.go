package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// Handles across nodes (docs/cluster.md, "Handles"): a handle's value
// lives only in the memory of the node that ran its execution (the
// record's owner). Another node asked for it (GET
// /v1/executions/{id}/handles/{handle}) reads it from the owner over NATS,
// in chunks that fit a message (OpHandle, from an offset), and streams it
// on; an owner that is gone (its lease lost, or it no longer holds the
// execution: a restart) took the value with it, which is 410 GONE, naming
// the node.

// maxHandleValueBytes bounds a handle's value as an owner reports it: an
// execution's handles hold at most 64 MiB together (executor's bound).
const maxHandleValueBytes = 64 << 20

// chunkSlack is what a chunk's message holds beside its data's base64.
const chunkSlack = 8 << 10

// handleChunk is an owner's answer to OpHandle: the handle (without its
// value), its value's length, and the value's bytes from Offset.
type handleChunk struct {
	ID     string    `json:"id"`
	Tool   string    `json:"tool"`
	Size   int       `json:"size"`
	Labels api.Label `json:"labels"`
	Total  int       `json:"total"`
	Offset int       `json:"offset"`
	Data   []byte    `json:"data"`
}

// decodeHandleChunk decodes and checks an owner's chunk of handle
// name's value read from offset.
func decodeHandleChunk(body []byte, name string, offset int) (handleChunk, error) {
	var ch handleChunk
	if err := json.Unmarshal(body, &ch); err != nil {
		return ch, fmt.Errorf("a handle's chunk that is not JSON: %w", err)
	}
	switch {
	case ch.ID != name:
		return ch, fmt.Errorf("a chunk of handle %q, not of %q", ch.ID, name)
	case ch.Total < 0 || ch.Total > maxHandleValueBytes:
		return ch, fmt.Errorf("a handle's value of %d bytes: at most %d", ch.Total, maxHandleValueBytes)
	case ch.Offset != offset:
		return ch, fmt.Errorf("a handle's chunk from byte %d, asked from %d", ch.Offset, offset)
	case len(ch.Data) > ch.Total-offset:
		return ch, fmt.Errorf("a handle's chunk of %d bytes from byte %d of %d", len(ch.Data), offset, ch.Total)
	case len(ch.Data) == 0 && offset < ch.Total:
		return ch, fmt.Errorf("an empty chunk of a handle's value at byte %d of %d", offset, ch.Total)
	}
	return ch, nil
}

// chunkBytes is how many bytes of a value one chunk carries: what fits in
// a message of the server's maximum payload as base64.
func (c *Cluster) chunkBytes() int {
	return max(int(c.nc.MaxPayload())-chunkSlack, 4<<10) / 4 * 3
}

// answerHandle is the owner's side of OpHandle: a chunk of the value of
// req.Handle, which x (nil: not held here) holds.
func (c *Cluster) answerHandle(x Execution, req NodeRequest) nodeReply {
	fail := func(e *httperr.Error) nodeReply {
		return nodeReply{Status: e.Status, Body: envelope(e), RetryAfterMS: e.RetryAfter.Milliseconds()}
	}
	if x == nil {
		return fail(httperr.Errorf(httperr.CodeGone,
			"execution %s's handle %s lived in the memory of node %s, which no longer holds the execution (it restarted since it ran it, or has just forgotten it past its retention): its value is lost; the execution's state stays readable while it is retained (GET /v1/executions/%s)",
			req.ID, req.Handle, c.Node, req.ID))
	}
	hv, herr := c.n.Handle(x, req.Handle)
	if herr != nil {
		return fail(herr)
	}
	if req.Offset < 0 || req.Offset > len(hv.Value) {
		return fail(httperr.Errorf(httperr.CodeBadRequest, "a read of handle %s from byte %d of %d", req.Handle, req.Offset, len(hv.Value)))
	}
	end := min(req.Offset+c.chunkBytes(), len(hv.Value))
	b, _ := json.Marshal(handleChunk{ID: hv.ID, Tool: hv.Tool, Size: hv.Size, Labels: hv.Labels, Total: len(hv.Value),
		Offset: req.Offset, Data: hv.Value[req.Offset:end]})
	return nodeReply{Status: http.StatusOK, Body: b}
}

// ForwardHandle answers GET /v1/executions/{id}/handles/{handle} for an
// execution this node does not hold: from its owner, chunk by chunk,
// streamed on; 404 as the owner would answer for an execution that has no
// such handle or has not completed; 503 OWNER_UNAVAILABLE while the owner
// does not answer and may still come back; 410 GONE once it is gone.
func (c *Cluster) ForwardHandle(ctx context.Context, w http.ResponseWriter, tenant, id, name string) {
	r, herr := c.Record(ctx, tenant, id)
	if herr != nil {
		httperr.Write(w, herr)
		return
	}
	if r.Status != protocol.StatusCompleted {
		httperr.Write(w, httperr.Errorf(httperr.CodeNotFound,
			"execution %q has no result holding handles (it is %s): a handle is resolved from a completed execution's result", id, r.Status))
		return
	}
	if c.nc == nil || r.Owner == c.Node {
		// This node's earlier life ran it (a restart), or another process on
		// the dir store's directory did: its memory is gone.
		httperr.Write(w, c.handleGone(r, name, "which is gone (it stopped or restarted since it ran the execution)"))
		return
	}
	offset, started := 0, false
	for {
		rep, err := c.ask(ctx, r.Owner, NodeRequest{Op: OpHandle, Tenant: tenant, ID: id, Handle: name, Offset: offset})
		if err != nil {
			if started { // the answer has begun: cut it, so that the client sees it incomplete
				panic(http.ErrAbortHandler)
			}
			c.handleOwnerSilent(ctx, w, r, name, err)
			return
		}
		if rep.Status != http.StatusOK {
			if started {
				panic(http.ErrAbortHandler)
			}
			if rep.RetryAfterMS > 0 {
				httperr.SetRetryAfter(w, time.Duration(rep.RetryAfterMS)*time.Millisecond)
			}
			httperr.WriteRaw(w, rep.Status, rep.Body)
			return
		}
		ch, err := decodeHandleChunk(rep.Body, name, offset)
		if err != nil {
			if started {
				panic(http.ErrAbortHandler)
			}
			httperr.Write(w, httperr.Errorf(string(api.CodeInternal), "node %s answered for handle %s of execution %s: %v", r.Owner, name, id, err))
			return
		}
		if !started {
			head, _ := json.Marshal(protocol.HandleValue{ID: ch.ID, Tool: ch.Tool, Size: ch.Size, Labels: ch.Labels, Value: json.RawMessage("0")})
			head = bytes.TrimSuffix(head, []byte("0}"))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(head)
			started = true
		}
		if _, err := w.Write(ch.Data); err != nil {
			return // the client went away
		}
		offset += len(ch.Data)
		if offset >= ch.Total {
			_, _ = w.Write([]byte("}\n"))
			return
		}
	}
}

// ask sends req to node and returns its answer; an error when it does not
// answer (no responders, a timeout) or the store's connection fails.
func (c *Cluster) ask(ctx context.Context, node string, req NodeRequest) (nodeReply, error) {
	b, _ := json.Marshal(req)
	rctx, cancel := context.WithTimeout(ctx, c.MaxWait+5*time.Second)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, c.nodeSubject(node), b)
	if err != nil {
		return nodeReply{}, err
	}
	var rep nodeReply
	if err := json.Unmarshal(m.Data, &rep); err != nil || rep.Status == 0 {
		return nodeReply{}, fmt.Errorf("node %s answered with something that is not an answer", node)
	}
	return rep, nil
}

// handleOwnerSilent answers for an owner that did not answer a handle's
// read: 503 while its lease may still be renewed (it may come back with
// the value), 410 once it is gone.
func (c *Cluster) handleOwnerSilent(ctx context.Context, w http.ResponseWriter, r store.Record, name string, err error) {
	if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
		httperr.Write(w, httperr.StoreUnavailable(err))
		return
	}
	leases, lerr := c.Store.Leases(ctx)
	if lerr != nil {
		httperr.Write(w, httperr.StoreUnavailable(lerr))
		return
	}
	for _, l := range leases {
		if l.Node == r.Owner && !c.gone(l, time.Now()) {
			lost := l.Until.Add(c.Fence.Margin())
			e := httperr.Errorf(httperr.CodeOwnerUnavailable,
				"handle %s of execution %s is held by node %s, which does not answer; retry (its value is lost if the node is gone at %s, its lease's expiry plus the margin)",
				name, r.ID, r.Owner, lost.UTC().Format(time.RFC3339Nano))
			e.RetryAfter = time.Until(lost)
			httperr.Write(w, e)
			return
		}
	}
	httperr.Write(w, c.handleGone(r, name, "which is gone (its lease expired, or it left the cluster)"))
}

// handleGone is the 410 for handle name of r's execution, whose owner is
// gone as why says.
func (c *Cluster) handleGone(r store.Record, name, why string) *httperr.Error {
	return httperr.Errorf(httperr.CodeGone,
		"execution %s's handle %s lived in the memory of node %s, %s: its value is lost; the execution's state stays readable (GET /v1/executions/%s)",
		r.ID, name, r.Owner, why, r.ID)
}
