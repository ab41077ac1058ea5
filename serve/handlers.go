package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
	"github.com/ptcx/ptcx/serve/internal/cluster"
)

// route is one endpoint. The OpenAPI document lists exactly these.
type route struct {
	method, path string
	// tenantHandler routes need a key; the others are open.
	tenantHandler func(w http.ResponseWriter, r *http.Request, t *tenant)
	open          http.HandlerFunc
	// long routes write for as long as their work lasts: an event stream
	// (until done), a direct call or MCP request (a run_code call lasts up
	// to the run's wall limit). The others must be written within
	// server.max_wait_ms + 10 s.
	long bool
}

func (s *Server) routeTable() []route {
	return []route{
		{method: "POST", path: "/v1/executions", tenantHandler: s.postExecution},
		{method: "GET", path: "/v1/executions/{id}", tenantHandler: s.getExecution},
		{method: "DELETE", path: "/v1/executions/{id}", tenantHandler: s.deleteExecution},
		{method: "POST", path: "/v1/executions/{id}/tool_results", tenantHandler: s.postToolResults},
		{method: "POST", path: "/v1/executions/{id}/approvals", tenantHandler: s.postApprovals},
		{method: "GET", path: "/v1/executions/{id}/events", tenantHandler: s.getEvents, long: true},
		{method: "GET", path: "/v1/executions/{id}/handles/{handle}", tenantHandler: s.getHandle},
		{method: "DELETE", path: "/v1/sessions/{name}", tenantHandler: s.deleteSession},
		{method: "POST", path: "/v1/calls", tenantHandler: s.postCall, long: true},
		{method: "POST", path: "/v1/plans", tenantHandler: s.postPlan},
		{method: "GET", path: "/v1/tools", tenantHandler: s.getTools},
		{method: "GET", path: "/v1/prompt", tenantHandler: s.getPrompt},
		{method: "POST", path: "/mcp", tenantHandler: s.mcp, long: true},
		{method: "GET", path: "/healthz", open: s.healthz},
		{method: "GET", path: "/readyz", open: s.readyz},
		{method: "GET", path: "/metrics", open: promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP},
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routeTable() {
		pattern := rt.method + " " + rt.path
		mux.HandleFunc(pattern, s.wrap(pattern, rt))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.metrics.requests.WithLabelValues("unknown", "404").Inc()
		writeError(w, errorf(CodeNotFound, "no route %s %s (see docs/service.md)", r.Method, r.URL.Path))
	})
	return mux
}

// statusWriter remembers the status for the metrics, the log and the
// request's span, the route and tenant that served it, and the execution a
// route without one in its path created or returned (logExecution).
// withRequest puts one around every request.
type statusWriter struct {
	http.ResponseWriter
	status    int
	route     string
	tenant    string
	execution string
}

// logExecution names the execution id in w's request log line and span:
// the one a POST /v1/executions created, or returned for its
// idempotency_key.
func logExecution(w http.ResponseWriter, id string) {
	if sw, ok := w.(*statusWriter); ok {
		sw.execution = id
	}
}

func (w *statusWriter) WriteHeader(code int)        { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) wrap(pattern string, rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw, ok := w.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: w, status: http.StatusOK}
		}
		sw.route = pattern
		if !rt.long {
			_ = http.NewResponseController(w).SetWriteDeadline(start.Add(s.cfg.maxWait() + 10*time.Second))
		}
		if rt.open != nil {
			rt.open(sw, r)
		} else if t, herr := s.authenticate(r); herr != nil {
			writeError(sw, herr)
		} else {
			sw.tenant = t.name
			rt.tenantHandler(sw, r, t)
		}
		sw.execution = cmp.Or(sw.execution, r.PathValue("id"))
		s.metrics.requests.WithLabelValues(pattern, strconv.Itoa(sw.status)).Inc()
		if rt.open == nil {
			s.log.InfoContext(r.Context(), "request", "route", pattern, "status", sw.status, "tenant", sw.tenant,
				"execution", sw.execution, "duration_ms", time.Since(start).Milliseconds())
		}
	}
}

func (s *Server) postExecution(w http.ResponseWriter, r *http.Request, t *tenant) {
	body, herr := readBody(w, r, s.cfg.maxBodyBytes())
	if herr != nil {
		writeError(w, herr)
		return
	}
	req, err := DecodeExecutionRequest(body)
	if err != nil {
		writeError(w, badRequest("the execution request", err))
		return
	}
	res, herr := s.start(r.Context(), t, req, body)
	if herr != nil && herr.Body.Reason == ReasonMaxExecutions && s.cfg.Overflow && s.cluster != nil {
		st, qerr := s.cluster.Enqueue(r.Context(), newExecution(newID(), t, body, req.IdempotencyKey, false, 0), req.Wait == nil || *req.Wait, body)
		if qerr != nil {
			writeError(w, qerr)
			return
		}
		var queued struct{ ID string }
		_ = json.Unmarshal(st, &queued) // enqueue's own JSON: an ExecutionState
		logExecution(w, queued.ID)
		writeRaw(w, http.StatusOK, st)
		return
	}
	if herr != nil {
		writeError(w, herr)
		return
	}
	if res.first != nil { // the key's earlier execution, on another node
		writeRaw(w, http.StatusOK, res.first)
		return
	}
	x := res.x
	logExecution(w, x.id)
	if s.cluster != nil {
		if err := s.cluster.Adopt(r.Context(), x); err != nil {
			x.cancelRun()
			writeError(w, storeUnavailable(err))
			return
		}
	}
	st := x.state()
	if req.Wait == nil || *req.Wait {
		st = x.wait(r.Context(), s.cfg.maxWait())
	}
	if herr := s.persist(x); herr != nil {
		writeError(w, herr)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// persist writes x's record, in a cluster, before its state is answered.
func (s *Server) persist(x *execution) *httpError {
	if s.cluster == nil {
		return nil
	}
	if err := s.cluster.PersistNow(x); err != nil {
		return storeUnavailable(err)
	}
	return nil
}

func (s *Server) execution(w http.ResponseWriter, r *http.Request, t *tenant) *execution {
	id := r.PathValue("id")
	x := s.table.Get(t.name, id)
	if x == nil {
		writeError(w, notFound(id))
	}
	return x
}

func (s *Server) getExecution(w http.ResponseWriter, r *http.Request, t *tenant) {
	if s.cluster != nil && s.local(t.name, r.PathValue("id")) == nil {
		st, herr := s.cluster.RemoteState(r.Context(), t.name, r.PathValue("id"), r.URL.Query().Get("wait") == "true")
		if herr != nil {
			writeError(w, herr)
			return
		}
		writeRaw(w, http.StatusOK, st)
		return
	}
	if x := s.execution(w, r, t); x != nil {
		st := x.state()
		if r.URL.Query().Get("wait") == "true" {
			st = x.wait(r.Context(), s.cfg.maxWait())
		}
		if st.Status == StatusPending { // in the store before anyone hears of it
			if herr := s.persist(x); herr != nil {
				writeError(w, herr)
				return
			}
		}
		writeJSON(w, http.StatusOK, st)
	}
}

func (s *Server) deleteExecution(w http.ResponseWriter, r *http.Request, t *tenant) {
	if s.cluster != nil && s.local(t.name, r.PathValue("id")) == nil {
		s.cluster.Forward(r.Context(), w, cluster.NodeRequest{Op: cluster.OpCancel, Tenant: t.name, ID: r.PathValue("id")})
		return
	}
	x := s.execution(w, r, t)
	if x == nil {
		return
	}
	st, herr := s.apply(r.Context(), x, cluster.NodeRequest{Op: cluster.OpCancel})
	if herr != nil {
		writeError(w, herr)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// deleteSession ends a keep_state session (session_state.go, remove):
// 204 when it existed, 404 when it did not.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, t *tenant) {
	name, scope := r.PathValue("name"), r.URL.Query().Get("scope")
	if err := checkSession(name); err != nil {
		writeError(w, badRequest("the session name", err))
		return
	}
	if scope != "" {
		if _, err := t.exec.Registry().Mode(scope); err != nil {
			writeError(w, badRequest("query parameter scope", err))
			return
		}
	}
	existed, herr := s.states.remove(r.Context(), t, scope, name)
	switch {
	case herr != nil:
		writeError(w, herr)
	case !existed:
		writeError(w, errorf(CodeNotFound, "no session %q with kept state for this tenant in scope %q (it never ran a keep_state program, belongs to another tenant, was deleted, or expired after tenants[].sessions.ttl_ms)", name, scope))
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// apply cancels x (opCancel) or gives it results (opResults), on the node
// that holds it, waits for its next state, and writes its record (with a
// store) before that state is answered.
func (s *Server) apply(ctx context.Context, x *execution, req cluster.NodeRequest) (ExecutionState, *httpError) {
	var st ExecutionState
	if x.isReleased() {
		return st, stopping(x.id)
	}
	switch req.Op {
	case cluster.OpCancel:
		if x.Settled() {
			return st, alreadySettled(x.id, x.state().Status)
		}
		s.cancel(x)
		st = x.waitSettled(ctx, s.cfg.maxWait())
	default: // OpResults, OpApprovals
		var (
			n    int
			due  bool
			herr *httpError
		)
		if req.Op == cluster.OpApprovals {
			n, due, herr = x.decide(req.Decisions) // approval.go
		} else {
			n, due, herr = x.deliver(req.Results)
		}
		if herr != nil {
			return st, herr
		}
		if due {
			if herr := s.resume(x); herr != nil {
				return st, herr
			}
		} else if n > 0 && s.cluster != nil {
			s.cluster.Wake(x) // a parked execution's follower publishes the new events
		}
		st = x.wait(ctx, s.cfg.maxWait())
	}
	if herr := s.persist(x); herr != nil {
		return st, herr
	}
	return st, nil
}

func (s *Server) postToolResults(w http.ResponseWriter, r *http.Request, t *tenant) {
	body, herr := readBody(w, r, s.cfg.maxBodyBytes())
	if herr != nil {
		writeError(w, herr)
		return
	}
	req, err := s.decodeToolResults(t, body) // hostwork.go: charged to t
	if err != nil {
		writeError(w, badRequest("the tool results", err))
		return
	}
	if s.cluster != nil && s.local(t.name, r.PathValue("id")) == nil {
		s.cluster.Forward(r.Context(), w, cluster.NodeRequest{Op: cluster.OpResults, Tenant: t.name, ID: r.PathValue("id"), Results: req.Results})
		return
	}
	x := s.execution(w, r, t)
	if x == nil {
		return
	}
	st, herr := s.apply(r.Context(), x, cluster.NodeRequest{Op: cluster.OpResults, Results: req.Results})
	if herr != nil {
		writeError(w, herr)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) postCall(w http.ResponseWriter, r *http.Request, t *tenant) {
	body, herr := readBody(w, r, s.cfg.maxBodyBytes())
	if herr != nil {
		writeError(w, herr)
		return
	}
	req, err := DecodeCallRequest(body)
	if err != nil {
		writeError(w, badRequest("the call", err))
		return
	}
	k, herr := s.admit(t, t.callWork(req.Name, req.Arguments))
	if herr != nil {
		writeError(w, herr)
		return
	}
	defer k.Release()
	res := t.exec.Execute(r.Context(), executor.Call{Scope: req.Scope, Name: req.Name, Args: req.Arguments})
	out := CallResponse{OK: res.OK()}
	if !res.Labels.IsZero() {
		l := res.Labels
		out.Labels = &l
	}
	if res.OK() {
		out.Value, out.Text = res.Value, res.Text
	} else {
		out.Error = errorBody(res.Err)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getTools(w http.ResponseWriter, r *http.Request, t *tenant) {
	ws, err := t.exec.Registry().WireSchemas(r.URL.Query().Get("scope"))
	if err != nil {
		writeError(w, badRequest("scope", err))
		return
	}
	switch f := r.URL.Query().Get("format"); f {
	case "", "openai":
		writeJSON(w, http.StatusOK, map[string]any{"tools": registry.OpenAITools(ws)})
	case "responses":
		writeJSON(w, http.StatusOK, map[string]any{"tools": registry.ResponsesTools(ws)})
	case "anthropic":
		writeJSON(w, http.StatusOK, map[string]any{"tools": registry.AnthropicTools(ws)})
	default:
		writeError(w, errorf(CodeBadRequest, "format %q: want openai (the default), responses or anthropic", f))
	}
}

func (s *Server) getPrompt(w http.ResponseWriter, r *http.Request, t *tenant) {
	q := r.URL.Query()
	lang := api.Language(q.Get("language"))
	if _, err := sdkgen.PromptLanguage(t.languages, string(lang)); err != nil {
		writeError(w, badRequest("language", err))
		return
	}
	sections, err := prompt(t.exec.Registry(), q.Get("scope"), t.languages, lang)
	if err != nil {
		writeError(w, badRequest("scope", err))
		return
	}
	type section struct {
		Name string `json:"name"`
		Text string `json:"text"`
	}
	out := make([]section, len(sections))
	for i, sec := range sections {
		out[i] = section{sec.Name, sec.Text}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sections": out})
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, errorf(CodeDraining, "draining: not accepting new work"))
		return
	}
	if s.cluster != nil {
		if err := s.cluster.Ready(r.Context()); err != nil {
			writeError(w, storeUnavailable(err))
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// ceiling is the sandbox's limits: per field, the highest any tenant sets
// (zero, the default, when none sets it).
func ceiling(ts []TenantConfig) api.Limits {
	c := api.DefaultLimits()
	for _, t := range ts {
		l := t.Limits.Limits()
		c.ComputeTime, c.WallTime = max(c.ComputeTime, l.ComputeTime), max(c.WallTime, l.WallTime)
		c.MemoryBytes, c.OutputBytes, c.MaxCalls = max(c.MemoryBytes, l.MemoryBytes), max(c.OutputBytes, l.OutputBytes), max(c.MaxCalls, l.MaxCalls)
	}
	return c
}
