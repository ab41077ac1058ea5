package protocol

import (
	"encoding/json"

	"github.com/ptcx/ptcx/api"
)

// CallRequest is the body of POST /v1/calls.
type CallRequest struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Scope     string          `json:"scope,omitempty"`
}

// CallResponse is the answer of POST /v1/calls: the envelope of `ptcx call`.
type CallResponse struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Text  string          `json:"text,omitempty"`
	Error *ErrorBody      `json:"error,omitempty"`
	// Labels is the result's label when it is not the lowest (docs/security.md, "Data flow").
	Labels *api.Label `json:"labels,omitempty"`
}
