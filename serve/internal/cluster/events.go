package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/serve/protocol"
)

// RemoteEvents streams, as Server-Sent Events, the events of an execution
// another node owns, from its JetStream subject: those after after, then
// new ones as the owner publishes them, ending after the done event.
func (c *Cluster) RemoteEvents(w http.ResponseWriter, r *http.Request, id string, after int) {
	if c.js == nil {
		httperr.Write(w, httperr.Errorf(httperr.CodeNotFound, "execution %s is not live on this node, and the dir store keeps no events: its state is at GET /v1/executions/%s", id, id))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	cons, err := c.js.OrderedConsumer(ctx, c.Events, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{c.eventSubject(id)}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		httperr.Write(w, httperr.StoreUnavailable(err))
		return
	}
	it, err := cons.Messages()
	if err != nil {
		httperr.Write(w, httperr.StoreUnavailable(err))
		return
	}
	defer it.Stop()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	for {
		wait, stop := context.WithTimeout(ctx, c.KeepAlive)
		m, err := it.Next(jetstream.NextContext(wait))
		stop()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			continue
		}
		if err != nil {
			return
		}
		var e protocol.Event
		if json.Unmarshal(m.Data(), &e) != nil || e.ID <= after {
			continue
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data); err != nil || rc.Flush() != nil {
			return
		}
		after = e.ID
		if e.Type == protocol.EventDone {
			return
		}
	}
}
