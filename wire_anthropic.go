package ptcx

import (
	"encoding/json"
	"fmt"
)

const anthropicMessages = "Anthropic message"

// AnthropicToolResult is the content block that answers one tool_use block
// in the Anthropic Messages API: {"type": "tool_result", "tool_use_id": ...,
// "content": ..., "is_error": true on failure}.
type AnthropicToolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// AnthropicMessage is a user message made of tool results: the API wants
// every tool_use of an assistant turn answered in the one user message that
// follows it.
type AnthropicMessage struct {
	Role    string                `json:"role"`
	Content []AnthropicToolResult `json:"content"`
}

// AnthropicCalls decodes the tool calls of an Anthropic Messages payload: a
// whole message (its "content" blocks), an array of content blocks, or one
// block. Blocks of other types (text, thinking, server tools the API ran
// itself) are skipped. A call is {"type": "tool_use", "id", "name",
// "input"} with the input a JSON object. See the package documentation for
// what is an error and what an INVALID_ARGS call.
func AnthropicCalls(payload []byte) ([]Call, error) {
	o, blocks, err := parsePayload(anthropicMessages, payload)
	switch {
	case err != nil:
		return nil, err
	case o == nil:
	case o.has("content"):
		if first(o["content"]) == '"' {
			return nil, nil // a message of plain text
		}
		if blocks, err = arrayAt(anthropicMessages, `"content"`, o["content"]); err != nil {
			return nil, err
		}
	case o.has("type"):
		blocks = []json.RawMessage{payload}
	default:
		return nil, fmt.Errorf(`ptcx: the %s payload has neither "content" nor "type": it is not a message or a content block`, anthropicMessages)
	}
	var calls []Call
	for i, raw := range blocks {
		block, err := objectAt(anthropicMessages, fmt.Sprintf("content block %d", i), raw)
		if err != nil {
			return nil, err
		}
		typ, problem := block.text("type")
		switch {
		case problem != "":
			return nil, fmt.Errorf("ptcx: the %s payload: content block %d: %s", anthropicMessages, i, problem)
		case typ == "":
			return nil, fmt.Errorf(`ptcx: the %s payload: content block %d has no "type"`, anthropicMessages, i)
		case typ != "tool_use":
			continue
		}
		id, name, problem := block.identify("id", "name")
		if problem != "" {
			calls = append(calls, invalidCall(id, name, "%s", problem))
			continue
		}
		var args json.RawMessage
		if !absent(block["input"]) {
			args = block["input"]
		}
		calls = append(calls, Call{ID: id, Name: name, Args: args})
	}
	return calls, nil
}

// AnthropicResult is the block that gives r back to the model: content is
// r's text, or for a failure "CODE: text" with is_error set.
func AnthropicResult(r Result) AnthropicToolResult {
	return AnthropicToolResult{Type: "tool_result", ToolUseID: r.ID, Content: modelText(r), IsError: r.Err != nil}
}

// AnthropicResults is the user message that gives results back, in order.
func AnthropicResults(results ...Result) AnthropicMessage {
	m := AnthropicMessage{Role: "user", Content: make([]AnthropicToolResult, len(results))}
	for i, r := range results {
		m.Content[i] = AnthropicResult(r)
	}
	return m
}
