package serve

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/internal/httperr"
)

// The codes of HTTP-level errors (the error envelope's code when the
// request itself failed; a failed execution carries api codes instead),
// beside CodeStoreUnavailable and CodeOwnerUnavailable (below). Each
// has one HTTP status: httpStatus.
const (
	CodeBadRequest    = httperr.CodeBadRequest
	CodeUnauthorized  = httperr.CodeUnauthorized
	CodeNotFound      = httperr.CodeNotFound
	CodeConflict      = httperr.CodeConflict
	CodeTooLarge      = httperr.CodeTooLarge
	CodeQuotaExceeded = httperr.CodeQuotaExceeded
	CodeDraining      = httperr.CodeDraining
)

// CodeStoreUnavailable is the HTTP-level code of a request that needed
// the cluster's store when it could not be used (503, and /readyz), and
// CodeOwnerUnavailable of one that needed the execution's owner node while
// it does not answer and its lease has not expired yet (503 with the
// Retry-After of the lease's expiry); CodeGone of one for a handle's value
// that lived only in the memory of a node that is gone (410).
const (
	CodeStoreUnavailable = httperr.CodeStoreUnavailable
	CodeOwnerUnavailable = httperr.CodeOwnerUnavailable
	CodeGone             = httperr.CodeGone
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

// httpError is a request that failed before or instead of its work
// (serve/internal/httperr, which the cluster answers with too).
type httpError = httperr.Error

// httpStatus is the HTTP status of each code an error envelope carries:
// the one statement of the mapping is httperr.Status (errorf answers with
// it, and docs/service.md's table of errors is checked against it).
var httpStatus = httperr.Status

// errorf is an error with code, answered with the code's status
// (httpStatus; a code missing there is the server's fault, 500).
func errorf(code, format string, args ...any) *httpError {
	return httperr.Errorf(code, format, args...)
}

func quotaError(reason, format string, args ...any) *httpError {
	e := errorf(CodeQuotaExceeded, format, args...)
	e.Body.Reason, e.RetryAfter = reason, DefaultRetryAfter
	return e
}

// unavailable is an error with Retry-After (DefaultRetryAfter): a failure
// on the server's side that may pass (a 503 code of httpStatus), the same
// request to be retried.
func unavailable(code, format string, args ...any) *httpError {
	return httperr.Unavailable(code, format, args...)
}

func notFound(id string) *httpError { return httperr.NotFound(id) }

func errorBody(e *api.Error) *ErrorBody {
	if e == nil {
		return nil
	}
	return &ErrorBody{Code: string(e.Code), Kind: e.Kind, Message: e.Message, Violations: e.Violations, Location: e.Location, Stack: e.Stack, Policy: e.Policy}
}

func writeError(w http.ResponseWriter, e *httpError) { httperr.Write(w, e) }

// setRetryAfter sets Retry-After to d in whole seconds, rounded up (none
// for d <= 0).
func setRetryAfter(w http.ResponseWriter, d time.Duration) { httperr.SetRetryAfter(w, d) }

func writeJSON(w http.ResponseWriter, status int, v any) { httperr.WriteJSON(w, status, v) }

// storeUnavailable is a 503 for a request that needed the cluster's store
// when it could not be used.
func storeUnavailable(err error) *httpError { return httperr.StoreUnavailable(err) }

// alreadySettled is the answer to a DELETE of a settled execution.
func alreadySettled(id, status string) *httpError { return httperr.AlreadySettled(id, status) }

// writeRaw writes body, JSON as is, with status.
func writeRaw(w http.ResponseWriter, status int, body json.RawMessage) {
	httperr.WriteRaw(w, status, body)
}
