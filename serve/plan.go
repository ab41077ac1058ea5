package serve

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/serve/protocol"
)

// Plan is the answer of POST /v1/plans and an execution's approved plan
// (api.Plan, which package plan reads).
type Plan = api.Plan

// PlanRequest is the body of POST /v1/plans (protocol.PlanRequest).
type PlanRequest = protocol.PlanRequest

// DecodePlanRequest decodes and checks a POST /v1/plans body.
func DecodePlanRequest(data []byte) (*PlanRequest, error) {
	var req PlanRequest
	if err := decodeStrict(data, &req); err != nil {
		return nil, err
	}
	if req.Code == "" {
		return nil, errors.New("field code: required (the TypeScript program)")
	}
	// The client tools are checked as an execution's are (their names and
	// their data-flow members, which the plan shows): a plan read for
	// tools no execution could declare would be approved for nothing.
	if err := checkClientToolList(req.ClientTools); err != nil {
		return nil, err
	}
	if err := checkClientPolicies(req.ClientTools); err != nil {
		return nil, err
	}
	return &req, nil
}

// postPlan reads a program and answers its plan (package plan).
func (s *Server) postPlan(w http.ResponseWriter, r *http.Request, t *tenant) {
	body, herr := readBody(w, r, s.cfg.maxBodyBytes())
	if herr != nil {
		writeError(w, herr)
		return
	}
	req, err := DecodePlanRequest(body)
	if err != nil {
		writeError(w, badRequest("the plan request", err))
		return
	}
	extra := make([]executor.PlanTool, len(req.ClientTools))
	for i, ct := range req.ClientTools {
		d, _ := clientPolicy(ct).declaration() // checked by DecodePlanRequest
		extra[i] = executor.PlanTool{Name: ct.Name, Policy: d}
	}
	p, err := s.readPlan(t, req.Scope, req.Code, extra)
	if herr, ok := err.(*httpError); ok {
		writeError(w, herr)
		return
	}
	if err != nil {
		writeError(w, errorf(CodeBadRequest, "the program cannot run (%s): %s", api.CodeOf(err), err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// readPlan reads a program for tenant t: host work done for its request
// (stripping, parsing and walking up to api.MaxCodeBytes of program), so it
// waits for compute as a run does, refused while the tenant's
// compute_seconds_per_minute is spent, and is charged to it (hostwork.go).
func (s *Server) readPlan(t *tenant, scope, code string, extra []executor.PlanTool) (*Plan, error) {
	if t.compute != nil {
		if ok, wait := t.compute.Reserve(0); !ok {
			e := quotaError(ReasonCompute, "tenant %s has used its %g compute seconds per minute (quotas.compute_seconds_per_minute), the runs in flight included; a plan is read on its compute too; retry in %v", t.name, t.compute.Rate(), wait.Round(time.Millisecond))
			e.RetryAfter = max(wait, time.Second)
			return nil, e
		}
	}
	began := time.Now()
	defer func() { s.chargeHostWork(t, time.Since(began)) }()
	return t.exec.Plan(scope, code, extra...)
}

var planHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkPlan checks an execution request's plan: a plan document, not for
// a keep_state execution.
func checkPlan(req *ExecutionRequest) error {
	if req.Plan == nil {
		return nil
	}
	if !planHash.MatchString(req.Plan.Hash) {
		return fmt.Errorf("field plan.hash: %q is not a SHA-256 in hex, as POST /v1/plans gives it", req.Plan.Hash)
	}
	if req.KeepState {
		return errors.New("field plan: a plan cannot bind a keep_state execution: the session's earlier programs may have left aliases of tools " +
			"that no reading of this program can see; run it without keep_state, or without the plan")
	}
	return nil
}
