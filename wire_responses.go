package ptcx

import (
	"encoding/json"
	"fmt"
)

const openAIResponses = "OpenAI response"

// ResponsesOutput is the input item that answers one function call in the
// OpenAI Responses API: {"type": "function_call_output", "call_id": ...,
// "output": ...}.
type ResponsesOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// ResponsesCalls decodes the function calls of an OpenAI Responses payload:
// a whole response (its "output" items), an array of output items, or one
// item. Items of other types (messages, reasoning, built-in tool calls the
// API ran itself) carry no call for the host and are skipped. A call is
// {"type": "function_call", "call_id", "name", "arguments"} with the
// arguments a JSON string; the result is matched by call_id, not by the
// item's own "id". See the package documentation for what is an error and
// what an INVALID_ARGS call.
func ResponsesCalls(payload []byte) ([]Call, error) {
	o, items, err := parsePayload(openAIResponses, payload)
	switch {
	case err != nil:
		return nil, err
	case o == nil:
	case o.has("output"):
		if items, err = arrayAt(openAIResponses, `"output"`, o["output"]); err != nil {
			return nil, err
		}
	case o.has("type"):
		items = []json.RawMessage{payload}
	default:
		return nil, fmt.Errorf(`ptcx: the %s payload has neither "output" nor "type": it is not a response or an output item`, openAIResponses)
	}
	var calls []Call
	for i, raw := range items {
		item, err := objectAt(openAIResponses, fmt.Sprintf("output item %d", i), raw)
		if err != nil {
			return nil, err
		}
		typ, problem := item.text("type")
		switch {
		case problem != "":
			return nil, fmt.Errorf("ptcx: the %s payload: output item %d: %s", openAIResponses, i, problem)
		case typ == "":
			return nil, fmt.Errorf(`ptcx: the %s payload: output item %d has no "type"`, openAIResponses, i)
		case typ != "function_call":
			continue
		}
		id, name, problem := item.identify("call_id", "name")
		if problem != "" {
			calls = append(calls, invalidCall(id, name, "%s", problem))
			continue
		}
		calls = append(calls, Call{ID: id, Name: name, Args: stringArguments(item["arguments"])})
	}
	return calls, nil
}

// ResponsesResult is the input item that gives r back to the model: output
// is r's text, or for a failure "CODE: text" (the API has no error flag).
func ResponsesResult(r Result) ResponsesOutput {
	return ResponsesOutput{Type: "function_call_output", CallID: r.ID, Output: modelText(r)}
}
