package serve

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// sseKeepAlive is how often an idle event stream sends a comment, so that
// proxies keep it open and a gone client is noticed.
const sseKeepAlive = 15 * time.Second

// getEvents streams an execution's events as Server-Sent Events: every
// event after Last-Event-ID (header, or the last_event_id query parameter),
// then new ones as they happen, ending after the done event.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request, t *tenant) {
	x := s.local(t.name, r.PathValue("id"))
	if x == nil && s.cluster == nil {
		writeError(w, notFound(r.PathValue("id")))
		return
	}
	after := 0
	if v := r.Header.Get("Last-Event-ID"); v != "" || r.URL.Query().Has("last_event_id") {
		if v == "" {
			v = r.URL.Query().Get("last_event_id")
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, errorf(CodeBadRequest, "Last-Event-ID %q: want the non-negative integer id of the last event received", v))
			return
		}
		after = n
	}
	closeStream, herr := s.openStream(t)
	if herr != nil {
		writeError(w, herr)
		return
	}
	defer closeStream()
	if x == nil {
		if _, herr := s.cluster.Record(r.Context(), t.name, r.PathValue("id")); herr != nil {
			writeError(w, herr)
			return
		}
		s.cluster.RemoteEvents(w, r, r.PathValue("id"), after)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	keep := time.NewTicker(sseKeepAlive)
	defer keep.Stop()
	for {
		if s.cluster != nil && !s.cluster.Current(x) {
			return // fenced (internal/cluster/fence.go): a reconnection (Last-Event-ID) is served from the store's stream
		}
		events, done, changed := x.eventsAfter(after)
		for _, e := range events {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data); err != nil {
				return
			}
			after = e.ID
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if done && len(events) == 0 {
			return
		}
		if done {
			continue // the done event itself may be in the next batch
		}
		select {
		case <-changed:
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
	}
}
