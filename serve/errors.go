package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ptcx/ptcx/api"
)

// The codes of HTTP-level errors (the error envelope's code when the
// request itself failed; a failed execution carries api codes instead),
// beside CodeStoreUnavailable and CodeOwnerUnavailable (cluster.go). Each
// has one HTTP status: httpStatus.
const (
	CodeBadRequest    = "BAD_REQUEST"
	CodeUnauthorized  = "UNAUTHORIZED"
	CodeNotFound      = "NOT_FOUND"
	CodeConflict      = "CONFLICT"
	CodeTooLarge      = "TOO_LARGE"
	CodeQuotaExceeded = "QUOTA_EXCEEDED"
	CodeDraining      = "DRAINING"
)

// CodeStoreUnavailable is the HTTP-level code of a request that needed
// the cluster's store when it could not be used (503, and /readyz), and
// CodeOwnerUnavailable of one that needed the execution's owner node while
// it does not answer and its lease has not expired yet (503 with the
// Retry-After of the lease's expiry).
const (
	CodeStoreUnavailable = "STORE_UNAVAILABLE"
	CodeOwnerUnavailable = "OWNER_UNAVAILABLE"
)

// The reasons of a 429 (ErrorBody.Reason).
const (
	ReasonMaxConcurrent = "max_concurrent"
	ReasonMaxPending    = "max_pending"
	ReasonMaxExecutions = "max_executions"
	ReasonCompute       = "compute_seconds"
	ReasonMaxSessions   = "max_sessions"
	// ReasonMaxStateSessions is tenants[].sessions.max_sessions: the
	// keep_state sessions a tenant has in the store (ReasonMaxSessions is
	// the workspace sessions open at once).
	ReasonMaxStateSessions = "max_state_sessions"
	// ReasonMemoryShare is quotas.max_memory_mb: the guest memory the
	// tenant's runs in flight commit.
	ReasonMemoryShare = "memory_share"
	// ReasonParkedBytes is quotas.max_parked_bytes: the bytes of the
	// tenant's parked executions' snapshots.
	ReasonParkedBytes = "parked_bytes"
	// ReasonMaxStreams is quotas.max_streams: the tenant's event streams
	// open at once.
	ReasonMaxStreams = "max_streams"
)

// httpError is a request that failed before or instead of its work.
type httpError struct {
	status     int
	body       ErrorBody
	retryAfter time.Duration
	// invalidToken marks a 401 for a key sent and refused
	// (bearerChallenge).
	invalidToken bool
}

func (e *httpError) Error() string { return e.body.Message }

// httpStatus is the HTTP status of each code an error envelope carries:
// the one statement of the mapping (errorf answers with it, and
// docs/service.md's table of errors is checked against it). BUSY and INTERNAL
// are api codes that a request itself can fail with too.
var httpStatus = map[string]int{
	CodeBadRequest:           http.StatusBadRequest,
	CodeUnauthorized:         http.StatusUnauthorized,
	CodeNotFound:             http.StatusNotFound,
	CodeConflict:             http.StatusConflict,
	CodeTooLarge:             http.StatusRequestEntityTooLarge,
	CodeQuotaExceeded:        http.StatusTooManyRequests,
	CodeDraining:             http.StatusServiceUnavailable,
	string(api.CodeBusy):     http.StatusServiceUnavailable,
	CodeStoreUnavailable:     http.StatusServiceUnavailable,
	CodeOwnerUnavailable:     http.StatusServiceUnavailable,
	string(api.CodeInternal): http.StatusInternalServerError,
}

// errorf is an error with code, answered with the code's status
// (httpStatus; a code missing there is the server's fault, 500).
func errorf(code, format string, args ...any) *httpError {
	status, ok := httpStatus[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &httpError{status: status, body: ErrorBody{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func quotaError(reason, format string, args ...any) *httpError {
	e := errorf(CodeQuotaExceeded, format, args...)
	e.body.Reason, e.retryAfter = reason, DefaultRetryAfter
	return e
}

// unavailable is an error with Retry-After (DefaultRetryAfter): a failure
// on the server's side that may pass (a 503 code of httpStatus), the same
// request to be retried.
func unavailable(code, format string, args ...any) *httpError {
	e := errorf(code, format, args...)
	e.retryAfter = DefaultRetryAfter
	return e
}

func notFound(id string) *httpError {
	return errorf(CodeNotFound, "no execution %q for this tenant (it never existed, belongs to another tenant, or expired after its retention)", id)
}

func errorBody(e *api.Error) *ErrorBody {
	if e == nil {
		return nil
	}
	return &ErrorBody{Code: string(e.Code), Kind: e.Kind, Message: e.Message, Violations: e.Violations, Location: e.Location, Stack: e.Stack}
}

// bearerChallenge is the WWW-Authenticate of every 401 (RFC 6750, 3):
// the scheme the API takes, its realm, and invalid_token when a key was
// sent and refused.
func bearerChallenge(e *httpError) string {
	if e.invalidToken {
		return `Bearer realm="ptcx", error="invalid_token"`
	}
	return `Bearer realm="ptcx"`
}

func writeError(w http.ResponseWriter, e *httpError) {
	setRetryAfter(w, e.retryAfter)
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", bearerChallenge(e))
	}
	writeJSON(w, e.status, ErrorEnvelope{Error: e.body})
}

// setRetryAfter sets Retry-After to d in whole seconds, rounded up (none
// for d <= 0).
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		secs := max((d+time.Second-1)/time.Second, 1)
		w.Header().Set("Retry-After", strconv.Itoa(int(secs)))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, status = []byte(`{"error":{"code":"INTERNAL","message":"the answer could not be encoded"}}`), http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// storeUnavailable is a 503 for a request that needed the cluster's store
// when it could not be used.
func storeUnavailable(err error) *httpError {
	e := errorf(CodeStoreUnavailable, "the cluster's store: %v", err)
	e.retryAfter = DefaultRetryAfter
	return e
}

// alreadySettled is the answer to a DELETE of a settled execution.
func alreadySettled(id, status string) *httpError {
	return errorf(CodeConflict, "execution %s has settled already (%s): there is nothing to cancel", id, status)
}

// writeRaw writes body, JSON as is, with status.
func writeRaw(w http.ResponseWriter, status int, body json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
