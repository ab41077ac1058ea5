package protocol

import "encoding/json"

// ToolResultsRequest is the body of POST /v1/executions/{id}/tool_results.
type ToolResultsRequest struct {
	Results []ToolResult `json:"results"`
}

// ToolResult answers one pending call.
type ToolResult struct {
	ID    string           `json:"id"`
	OK    bool             `json:"ok"`
	Value json.RawMessage  `json:"value,omitempty"`
	Error *ToolResultError `json:"error,omitempty"`
}

// ToolResultError is a failed client-side call: the program gets a
// ToolCallError with code TOOL_FAILED and this message.
type ToolResultError struct {
	Message string `json:"message"`
}
