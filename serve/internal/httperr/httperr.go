// Package httperr is ptcx serve's HTTP-level errors: a request that
// failed before or instead of its work, its code (the error envelope's
// code), the one HTTP status of each code, and how it is written. Package
// serve and its cluster (serve/internal/cluster) answer with it; serve
// names its codes for its users. It imports the standard library, api and
// serve/protocol only.
package httperr

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/serve/protocol"
)

// The codes of HTTP-level errors (the error envelope's code when the
// request itself failed; a failed execution carries api codes instead).
// Each has one HTTP status: Status.
const (
	CodeBadRequest    = "BAD_REQUEST"
	CodeUnauthorized  = "UNAUTHORIZED"
	CodeNotFound      = "NOT_FOUND"
	CodeConflict      = "CONFLICT"
	CodeTooLarge      = "TOO_LARGE"
	CodeQuotaExceeded = "QUOTA_EXCEEDED"
	CodeDraining      = "DRAINING"
	// CodeStoreUnavailable is the code of a request that needed the
	// cluster's store when it could not be used (503, and /readyz), and
	// CodeOwnerUnavailable of one that needed the execution's owner node
	// while it does not answer and its lease has not expired yet (503 with
	// the Retry-After of the lease's expiry).
	CodeStoreUnavailable = "STORE_UNAVAILABLE"
	CodeOwnerUnavailable = "OWNER_UNAVAILABLE"
	// CodeGone is the code of a request for what lived only in the memory
	// of a node that is gone (a handle's value, in a cluster): it will not
	// come back (410).
	CodeGone = "GONE"
)

// DefaultRetryAfter is the Retry-After of a refusal that may pass.
const DefaultRetryAfter = 1 * time.Second

// Error is a request that failed before or instead of its work.
type Error struct {
	Status     int
	Body       protocol.ErrorBody
	RetryAfter time.Duration
	// InvalidToken marks a 401 for a key sent and refused
	// (BearerChallenge).
	InvalidToken bool
}

func (e *Error) Error() string { return e.Body.Message }

// Status is the HTTP status of each code an error envelope carries: the
// one statement of the mapping (Errorf answers with it, and
// docs/service.md's table of errors is checked against it). BUSY and
// INTERNAL are api codes that a request itself can fail with too.
var Status = map[string]int{
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
	CodeGone:                 http.StatusGone,
	string(api.CodeInternal): http.StatusInternalServerError,
}

// Errorf is an error with code, answered with the code's status (Status;
// a code missing there is the server's fault, 500).
func Errorf(code, format string, args ...any) *Error {
	status, ok := Status[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &Error{Status: status, Body: protocol.ErrorBody{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// Unavailable is an error with Retry-After (DefaultRetryAfter): a failure
// on the server's side that may pass (a 503 code of Status), the same
// request to be retried.
func Unavailable(code, format string, args ...any) *Error {
	e := Errorf(code, format, args...)
	e.RetryAfter = DefaultRetryAfter
	return e
}

// NotFound is the answer for an execution id the tenant has not.
func NotFound(id string) *Error {
	return Errorf(CodeNotFound, "no execution %q for this tenant (it never existed, belongs to another tenant, or expired after its retention)", id)
}

// StoreUnavailable is a 503 for a request that needed the cluster's store
// when it could not be used.
func StoreUnavailable(err error) *Error {
	e := Errorf(CodeStoreUnavailable, "the cluster's store: %v", err)
	e.RetryAfter = DefaultRetryAfter
	return e
}

// AlreadySettled is the answer to a DELETE of a settled execution.
func AlreadySettled(id, status string) *Error {
	return Errorf(CodeConflict, "execution %s has settled already (%s): there is nothing to cancel", id, status)
}

// Write writes e: its Retry-After and its envelope, with its status.
func Write(w http.ResponseWriter, e *Error) {
	SetRetryAfter(w, e.RetryAfter)
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", BearerChallenge(e))
	}
	WriteJSON(w, e.Status, protocol.ErrorEnvelope{Error: e.Body})
}

// BearerChallenge is the WWW-Authenticate of every 401 (RFC 6750, 3): the
// scheme the API takes, its realm, and invalid_token when a key was sent
// and refused.
func BearerChallenge(e *Error) string {
	if e.InvalidToken {
		return `Bearer realm="ptcx", error="invalid_token"`
	}
	return `Bearer realm="ptcx"`
}

// SetRetryAfter sets Retry-After to d in whole seconds, rounded up (none
// for d <= 0).
func SetRetryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		secs := max((d+time.Second-1)/time.Second, 1)
		w.Header().Set("Retry-After", strconv.Itoa(int(secs)))
	}
}

// WriteJSON writes v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, status = []byte(`{"error":{"code":"INTERNAL","message":"the answer could not be encoded"}}`), http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// WriteRaw writes body, JSON as is, with status.
func WriteRaw(w http.ResponseWriter, status int, body json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
