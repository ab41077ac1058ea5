package ptcx

import (
	"encoding/json"
	"fmt"
)

const openAIChat = "OpenAI chat completion"

// OpenAIToolMessage is the message that answers one tool call in OpenAI
// Chat Completions: {"role": "tool", "tool_call_id": ..., "content": ...}.
type OpenAIToolMessage struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

// OpenAICalls decodes the tool calls of an OpenAI Chat Completions (or
// DeepSeek) payload: a whole chat completion (one choice), its assistant
// message, the message's "tool_calls" array, or one tool call
// ({"id", "type": "function", "function": {"name", "arguments"}}, with the
// arguments a JSON string). A message without tool calls gives none. See
// the package documentation for what is an error and what an INVALID_ARGS
// call.
func OpenAICalls(payload []byte) ([]Call, error) {
	o, items, err := parsePayload(openAIChat, payload)
	switch {
	case err != nil:
		return nil, err
	case o == nil:
		return openAIToolCalls(items)
	case o.has("choices"):
		choices, err := arrayAt(openAIChat, `"choices"`, o["choices"])
		if err != nil {
			return nil, err
		}
		if len(choices) != 1 {
			return nil, fmt.Errorf("ptcx: the %s has %d choices: pass the message of the one the conversation continues with", openAIChat, len(choices))
		}
		choice, err := objectAt(openAIChat, "the choice", choices[0])
		if err != nil {
			return nil, err
		}
		msg, err := objectAt(openAIChat, `the choice's "message"`, choice["message"])
		if err != nil {
			return nil, err
		}
		return openAIMessage(msg)
	case o.has("tool_calls") || o.has("role"):
		return openAIMessage(o)
	case o.has("function") || o.has("type"):
		return []Call{openAIToolCall(o)}, nil
	}
	return nil, fmt.Errorf(`ptcx: the %s payload has none of "choices", "tool_calls", "role", "function" or "type": it is not a chat completion, a message or a tool call`, openAIChat)
}

func openAIMessage(msg object) ([]Call, error) {
	items, err := arrayAt(openAIChat, `"tool_calls"`, msg["tool_calls"])
	if err != nil {
		return nil, err
	}
	return openAIToolCalls(items)
}

func openAIToolCalls(items []json.RawMessage) ([]Call, error) {
	calls := make([]Call, 0, len(items))
	for i, raw := range items {
		o, err := objectAt(openAIChat, fmt.Sprintf("tool call %d", i), raw)
		if err != nil {
			return nil, err
		}
		calls = append(calls, openAIToolCall(o))
	}
	return calls, nil
}

func openAIToolCall(o object) Call {
	var fn object
	fnRaw := o["function"]
	if first(fnRaw) == '{' {
		_ = json.Unmarshal(fnRaw, &fn) // the payload is valid JSON: an object decodes
	}
	id, name, problem := object{"id": o["id"], "function.name": fn["name"]}.identify("id", "function.name")
	typ, typProblem := o.text("type")
	switch {
	case !absent(fnRaw) && fn == nil:
		problem = `the tool call's "function" is ` + kindOf(fnRaw) + ", not an object"
	case id == "": // the id's problem comes first: without one the call cannot be answered
	case typProblem != "":
		problem = "the tool call's " + typProblem
	case typ != "" && typ != "function":
		problem = fmt.Sprintf("tool calls of type %q are not supported: ptcx tools are function tools", typ)
	}
	if problem != "" {
		return invalidCall(id, name, "%s", problem)
	}
	return Call{ID: id, Name: name, Args: stringArguments(fn["arguments"])}
}

// OpenAIResult is the message that gives r back to the model: content is
// r's text, or for a failure "CODE: text" (Chat Completions has no error
// flag).
func OpenAIResult(r Result) OpenAIToolMessage {
	return OpenAIToolMessage{Role: "tool", ToolCallID: r.ID, Content: modelText(r)}
}
