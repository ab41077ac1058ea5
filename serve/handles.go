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
// holds its handles' values; elsewhere the answer is a 404 that says so.
func (s *Server) getHandle(w http.ResponseWriter, r *http.Request, t *tenant) {
	id, name := r.PathValue("id"), r.PathValue("handle")
	if s.cluster != nil && s.local(t.name, id) == nil {
		if s.table.Get(t.name, id) == nil {
			writeError(w, errorf(CodeNotFound, "no handle %q of execution %q here: a handle's value is held by the node that ran its execution, in its memory", name, id))
			return
		}
	}
	x := s.execution(w, r, t)
	if x == nil {
		return
	}
	x.mu.Lock()
	status, res := x.status, x.result
	x.mu.Unlock()
	if status != StatusCompleted {
		writeError(w, errorf(CodeNotFound, "execution %q has no result holding handles (it is %s): a handle is resolved from a completed execution's result", id, status))
		return
	}
	h, ok := res.Handle(name)
	if !ok {
		writeError(w, errorf(CodeNotFound, "execution %q's result holds no handle %q", id, name))
		return
	}
	writeJSON(w, http.StatusOK, protocol.HandleValue{ID: h.ID, Tool: h.Tool, Size: h.Size, Labels: h.Labels, Value: h.Value})
}
