package api

import (
	"encoding/json"
	"time"
)

// Schema is the public view of a tool: what display, inspection, SDK
// generation and the wire format need. It carries no body.
type Schema struct {
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	InputSchema     json.RawMessage `json:"input_schema"`
	OutputSchema    json.RawMessage `json:"output_schema,omitempty"`
	ConcurrencySafe bool            `json:"concurrency_safe"`
	Timeout         time.Duration   `json:"timeout,omitempty"`
	// Transport is true for run_code.
	Transport bool `json:"transport,omitempty"`
	// Handle is true for a tool whose results reach a program as handles
	// (its policy's "handle": true; docs/security.md, "Handles"): its
	// declaration returns Handle<Output>.
	Handle bool `json:"handle,omitempty"`
}
