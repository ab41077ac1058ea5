package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/serve/store"
)

// The overflow queue's bounds: a queued execution is offered to nodes at
// most workMaxDeliver times, workRetry apart when the taker had no slot
// for its tenant, and fails with BUSY after that.
const (
	workMaxDeliver = 60
	workRetry      = 500 * time.Millisecond
	workAckWait    = 30 * time.Second
	workConsumer   = "ptcx-workers"
)

// workItem is one queued execution: its id (its record is in the store,
// owner ""), its tenant and its request body as the client sent it.
type workItem struct {
	ID     string          `json:"id"`
	Tenant string          `json:"tenant"`
	Body   json.RawMessage `json:"body"`
}

// Enqueue hands an execution this node has no slot for to the work
// queue: its idempotency key's reservation (idempotency.go) and
// its record first (so that any node can answer for it), then the
// message. x is the execution as posted (its id, tenant, idempotency key
// and body's hash), body its request. The answer is its state: running,
// with no owner yet; or, for a key another execution holds, that one's.
func (c *Cluster) Enqueue(ctx context.Context, x Execution, wait bool, body []byte) (json.RawMessage, *httperr.Error) {
	id, tenant := x.ID(), x.Tenant()
	rec := store.Record{ID: id, Tenant: tenant, Status: protocol.StatusRunning, ExpiresAt: time.Now().Add(c.LiveTTL)}
	var hold *KeyHold
	if x.Key() != "" {
		h, first, herr := c.reserve(ctx, x, wait)
		if first != nil {
			return first, nil
		}
		if herr != nil {
			return nil, herr
		}
		hold, rec.Reservation = h, h.r.Key
		defer hold.Release() // unless queued: then the queue holds it
	}
	st, _ := json.Marshal(protocol.ExecutionState{ID: id, Status: protocol.StatusRunning})
	rec.State = st
	if _, err := c.Store.Create(ctx, rec); err != nil {
		return nil, httperr.StoreUnavailable(err)
	}
	b, _ := json.Marshal(workItem{ID: id, Tenant: tenant, Body: body})
	if _, err := c.js.Publish(ctx, c.Subject+".work", b, jetstream.WithMsgID(id)); err != nil {
		return nil, httperr.StoreUnavailable(err)
	}
	if hold != nil {
		hold.queued = true
	}
	c.log.Info("execution queued for another node", "execution", id, "tenant", tenant, "node", c.Node)
	return st, nil
}

// decodeWorkItem decodes and checks a work-queue message.
func decodeWorkItem(data []byte) (workItem, error) {
	var item workItem
	if err := json.Unmarshal(data, &item); err != nil {
		return item, fmt.Errorf("a work item that is not JSON: %w", err)
	}
	if item.ID == "" || item.Tenant == "" || len(item.Body) == 0 {
		return item, errors.New("a work item without id, tenant or body")
	}
	return item, nil
}

// startWorker starts the loop that takes queued executions while this
// node has a free slot.
func (c *Cluster) startWorker(ctx context.Context) error {
	cfg := jetstream.ConsumerConfig{
		Durable: workConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: workAckWait,
		MaxDeliver: workMaxDeliver, FilterSubject: c.Subject + ".work",
	}
	var cons jetstream.Consumer
	var err error
	if c.BindOnly {
		cons, err = c.js.Consumer(ctx, c.Work, workConsumer)
	} else {
		cons, err = c.js.CreateOrUpdateConsumer(ctx, c.Work, cfg)
	}
	if err != nil {
		return fmt.Errorf("%w: the work queue's consumer %q on stream %q: %w", store.ErrUnavailable, workConsumer, c.Work, err)
	}
	c.wg.Add(1)
	go c.workLoop(cons)
	return nil
}

func (c *Cluster) workLoop(cons jetstream.Consumer) {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		if !c.n.Room() || !c.Fence.Live() {
			select {
			case <-c.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			select {
			case <-c.stop:
				return
			case <-time.After(workRetry):
			}
			continue
		}
		for m := range batch.Messages() {
			c.take(m)
		}
	}
}

// take starts one queued execution here, or gives it back.
func (c *Cluster) take(m jetstream.Msg) {
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	item, err := decodeWorkItem(m.Data())
	if err != nil {
		c.log.Warn("a bad work item: dropped", "error", err.Error())
		_ = m.Term()
		return
	}
	rec, err := c.Store.Get(ctx, item.ID)
	if err != nil || rec.Owner != "" || rec.Status != protocol.StatusRunning {
		_ = m.Ack() // cancelled, expired or taken meanwhile
		return
	}
	x, herr, err := c.n.StartQueued(item.ID, item.Tenant, item.Body)
	if err != nil {
		_ = c.fail(ctx, rec, api.CodeInternal, "the queued execution could not be started: "+err.Error())
		_ = m.Term()
		return
	}
	if herr != nil {
		c.giveBack(ctx, m, rec, herr)
		return
	}
	if x == nil { // its key is another node's execution's now: this one will never start
		_ = c.fail(ctx, rec, api.CodeBusy, "no node could start the queued execution: its idempotency_key is held by another execution; retry later")
		_ = m.Term()
		return
	}
	if err := c.Adopt(ctx, x); err != nil {
		c.log.Warn("claiming a queued execution failed: cancelled here", "execution", x.ID(), "error", err.Error())
		x.CancelRun()
	}
	_ = m.Ack()
}

// giveBack returns a work item this node could not start (a tenant
// quota, or its lease lapsed meanwhile): redelivered workRetry later,
// failed with BUSY after the last delivery (not for a lapse).
func (c *Cluster) giveBack(ctx context.Context, m jetstream.Msg, rec store.Record, herr *httperr.Error) {
	md, err := m.Metadata()
	if herr.Status == http.StatusServiceUnavailable && !c.Fence.Live() { // this node's lease lapsed: another node takes it
		_ = m.NakWithDelay(workRetry)
		return
	}
	if herr.Status != http.StatusTooManyRequests || (err == nil && md.NumDelivered >= workMaxDeliver) {
		_ = c.fail(ctx, rec, api.CodeBusy, fmt.Sprintf("no node could start the queued execution (%d tries): %s; retry later", workMaxDeliver, herr.Body.Message))
		_ = m.Term()
		return
	}
	_ = m.NakWithDelay(workRetry)
}

// forwardQueued answers a DELETE or tool_results for an execution still
// in the queue: a cancel fails its record (the taker then drops it); it
// has no pending calls to answer.
func (c *Cluster) forwardQueued(ctx context.Context, w http.ResponseWriter, req NodeRequest, r store.Record) {
	if req.Op != OpCancel {
		httperr.WriteRaw(w, http.StatusOK, r.State)
		return
	}
	err := c.fail(ctx, r, api.CodeAborted, "cancelled (DELETE) while queued for a node with a free slot")
	if errors.Is(err, store.ErrConflict) {
		c.Forward(ctx, w, req) // taken meanwhile: ask its new owner
		return
	}
	if err != nil {
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
