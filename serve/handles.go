package serve

import (
	"net/http"

	"github.com/ptcx/ptcx/serve/protocol"
)

// getHandle serves GET /v1/executions/{id}/handles/{handle}: the value of
// a handle the execution's result holds (docs/security.md, "Handles"), to
// the tenant that owns the execution; any other gets a 404, as for the
// execution itself. The value lives with the result, so as long as the
// execution is retained (its bytes count toward the tenant's retained
// bytes: retained.go). In a cluster only the node that ran the execution
// holds its handles' values: another node reads them from it
// (cluster.ForwardHandle), or answers 410 GONE once it is gone.
func (s *Server) getHandle(w http.ResponseWriter, r *http.Request, t *tenant) {
	id, name := r.PathValue("id"), r.PathValue("handle")
	if s.cluster != nil && s.table.Get(t.name, id) == nil {
		s.cluster.ForwardHandle(r.Context(), w, t.name, id, name)
		return
	}
	x := s.execution(w, r, t)
	if x == nil {
		return
	}
	hv, herr := x.handle(name)
	if herr != nil {
		writeError(w, herr)
		return
	}
	writeJSON(w, http.StatusOK, hv)
}

// handle returns the value of handle name of x's result, or a 404 saying
// why there is none.
func (x *execution) handle(name string) (protocol.HandleValue, *httpError) {
	x.mu.Lock()
	status, res := x.status, x.result
	x.mu.Unlock()
	if status != StatusCompleted {
		return protocol.HandleValue{}, errorf(CodeNotFound, "execution %q has no result holding handles (it is %s): a handle is resolved from a completed execution's result", x.id, status)
	}
	h, ok := res.Handle(name)
	if !ok {
		return protocol.HandleValue{}, errorf(CodeNotFound, "execution %q's result holds no handle %q", x.id, name)
	}
	return protocol.HandleValue{ID: h.ID, Tool: h.Tool, Size: h.Size, Labels: h.Labels, Value: h.Value}, nil
}
