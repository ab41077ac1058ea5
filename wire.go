package ptcx

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// What the three wire adapters share (the package documentation says what
// a decoder accepts, and what becomes an error or an INVALID_ARGS call).

// object is one JSON object with its members still encoded.
type object map[string]json.RawMessage

// parsePayload decodes a payload into an object or an array.
func parsePayload(api string, payload []byte) (object, []json.RawMessage, error) {
	if !json.Valid(payload) {
		return nil, nil, fmt.Errorf("ptcx: the %s payload is not valid JSON", api)
	}
	switch first(payload) {
	case '{':
		var o object
		if err := json.Unmarshal(payload, &o); err != nil {
			return nil, nil, fmt.Errorf("ptcx: the %s payload: %w", api, err)
		}
		return o, nil, nil
	case '[':
		var a []json.RawMessage
		if err := json.Unmarshal(payload, &a); err != nil {
			return nil, nil, fmt.Errorf("ptcx: the %s payload: %w", api, err)
		}
		return nil, a, nil
	}
	return nil, nil, fmt.Errorf("ptcx: the %s payload is %s, not an object or an array", api, kindOf(payload))
}

// objectAt decodes raw as an object; what names it in an error.
func objectAt(api, what string, raw json.RawMessage) (object, error) {
	if first(raw) != '{' {
		return nil, fmt.Errorf("ptcx: the %s payload: %s is %s, not an object", api, what, kindOf(raw))
	}
	var o object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("ptcx: the %s payload: %s: %w", api, what, err)
	}
	return o, nil
}

// arrayAt decodes raw as an array; absent or null is an empty one.
func arrayAt(api, what string, raw json.RawMessage) ([]json.RawMessage, error) {
	if absent(raw) {
		return nil, nil
	}
	if first(raw) != '[' {
		return nil, fmt.Errorf("ptcx: the %s payload: %s is %s, not an array", api, what, kindOf(raw))
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("ptcx: the %s payload: %s: %w", api, what, err)
	}
	return a, nil
}

// text returns the string member key; absent or null is "". problem says
// what is wrong when the member is not a string.
func (o object) text(key string) (s, problem string) {
	raw := o[key]
	if absent(raw) {
		return "", ""
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", fmt.Sprintf("%q is %s, not a string", key, kindOf(raw))
	}
	return s, ""
}

// has reports whether the member key is present (null included).
func (o object) has(key string) bool {
	_, ok := o[key]
	return ok
}

// identify reads a call's id and name; problem says why the call cannot be
// answered or run.
func (o object) identify(idKey, nameKey string) (id, name, problem string) {
	id, idProblem := o.text(idKey)
	name, nameProblem := o.text(nameKey)
	switch {
	case idProblem != "":
		return "", name, "the tool call's " + idProblem
	case id == "":
		return "", name, fmt.Sprintf("the tool call has no %q: its result could not be matched to it", idKey)
	case nameProblem != "":
		return id, "", "the tool call's " + nameProblem
	case name == "":
		return id, "", fmt.Sprintf("the tool call has no tool name (%q)", nameKey)
	}
	return id, name, ""
}

// stringArguments reads arguments sent as a JSON string of JSON text (the
// OpenAI APIs). Absent or null means {}; an object is taken as it is (some
// compatible servers send one); anything else goes to the executor as it
// is, which answers INVALID_ARGS.
func stringArguments(raw json.RawMessage) json.RawMessage {
	if absent(raw) {
		return nil
	}
	var s string
	if first(raw) == '"' && json.Unmarshal(raw, &s) == nil {
		return json.RawMessage(s)
	}
	return raw
}

func absent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func first(b []byte) byte {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

// kindOf names the JSON kind of raw, for messages.
func kindOf(raw []byte) string {
	switch c := first(raw); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case c == 0:
		return "empty"
	}
	return "not JSON"
}

// modelText is what the model reads for r: its text or, for a failure,
// "CODE: text" ("CODE (kind): text"), as the MCP server shows it, so that a
// model whose API has no error flag still knows the call failed.
func modelText(r Result) string {
	if r.Err == nil {
		return r.Text
	}
	text := r.Text
	if text == "" {
		text = r.Err.Message
	}
	return r.Err.Prefix() + ": " + text
}
