package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/serve/internal/quota"
)

// mcp serves the tenant's MCP over Streamable HTTP (stateless, JSON
// answers: the answer comes once the request's calls are done). Every
// tools/call in the body is admitted first, as a direct call is
// (admission.go), and holds its ticket until the MCP handler answers; one
// refused refuses the whole POST with the admission's status and
// Retry-After, and answers each request in it with a JSON-RPC error
// naming the reason (mcpRefusal).
func (s *Server) mcp(w http.ResponseWriter, r *http.Request, t *tenant) {
	body, herr := readBody(w, r, s.cfg.maxBodyBytes())
	if herr != nil {
		writeError(w, herr)
		return
	}
	msgs, batch := mcpMessages(body)
	var held []*quota.Ticket
	defer func() {
		for _, k := range held {
			k.Release()
		}
	}()
	for _, m := range msgs {
		if !m.call {
			continue
		}
		k, herr := s.admit(t, t.mcpWork(m))
		if herr != nil {
			writeMCPRefusal(w, herr, msgs, batch)
			return
		}
		held = append(held, k)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	t.mcp.ServeHTTP(w, r)
}

// mcpMessage is what admission reads of one JSON-RPC message of an MCP
// POST: whether it may be a tools/call, which tool, its arguments, and its
// id (for the refusal).
type mcpMessage struct {
	call bool
	// tool is the called tool's name when the message names exactly one,
	// "" when it names none or several.
	tool string
	args json.RawMessage
	id   json.RawMessage // nil for a notification
}

// mcpWork is the work of a tools/call: a program's unless the message
// names one tool, not run_code (then a direct call's: no program runs).
func (t *tenant) mcpWork(m mcpMessage) quota.Work {
	if m.tool != "" && m.tool != registry.RunCode {
		return quota.Work{}
	}
	return t.callWork(registry.RunCode, m.args)
}

// mcpMessages reads the messages of an MCP POST body, an object or a
// batch (an array of them). It reads no less than the MCP handler will:
// a member named method in any letter case, or more than once, with the
// value "tools/call" makes the message a call (the SDK's decoder matches
// keys exactly; the standard library's, in any case), so that no way of
// writing a call reaches the handler unadmitted. What is not JSON the
// handler refuses; it is no call here.
func mcpMessages(body []byte) (msgs []mcpMessage, batch bool) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err == nil {
		batch = true
	} else {
		raws = []json.RawMessage{body}
	}
	msgs = make([]mcpMessage, 0, len(raws))
	for _, raw := range raws {
		msgs = append(msgs, readMCPMessage(raw))
	}
	return msgs, batch
}

// readMCPMessage reads one message's top-level members, and its params'
// name and arguments.
func readMCPMessage(raw json.RawMessage) mcpMessage {
	var m mcpMessage
	members, ok := objectMembers(raw)
	if !ok {
		return m
	}
	var params []json.RawMessage
	for _, mb := range members {
		switch {
		case equalFold(mb.key, "method"):
			var method string
			if json.Unmarshal(mb.value, &method) == nil && method == "tools/call" {
				m.call = true
			}
		case mb.key == "id":
			m.id = mb.value
		case equalFold(mb.key, "params"):
			params = append(params, mb.value)
		}
	}
	if !m.call || len(params) != 1 {
		return m
	}
	ps, ok := objectMembers(params[0])
	if !ok {
		return m
	}
	names := 0
	for _, mb := range ps {
		switch {
		case equalFold(mb.key, "name"):
			names++
			if json.Unmarshal(mb.value, &m.tool) != nil {
				m.tool = ""
			}
		case equalFold(mb.key, "arguments"):
			m.args = mb.value
		}
	}
	if names != 1 {
		m.tool = ""
	}
	return m
}

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers returns a JSON object's members in order, duplicates
// kept; ok is false when raw is not an object.
func objectMembers(raw json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out, false
		}
		out = append(out, member{key: key, value: v})
	}
	return out, true
}

func equalFold(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }

// mcpRefusalCode is the JSON-RPC error code of a request the server would
// not admit: in the range JSON-RPC leaves to servers.
const mcpRefusalCode = -32000

// writeMCPRefusal answers an MCP POST that admission refused: herr's
// status and Retry-After, and a JSON-RPC error for each request in the
// body (an array for a batch) whose data carries the code and reason.
func writeMCPRefusal(w http.ResponseWriter, herr *httpError, msgs []mcpMessage, batch bool) {
	type rpcError struct {
		Code    int       `json:"code"`
		Message string    `json:"message"`
		Data    ErrorBody `json:"data"`
	}
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}
	var out []response
	for _, m := range msgs {
		if m.id == nil {
			continue
		}
		out = append(out, response{JSONRPC: "2.0", ID: m.id, Error: rpcError{Code: mcpRefusalCode, Message: herr.Body.Message, Data: herr.Body}})
	}
	setRetryAfter(w, herr.RetryAfter)
	var body any = out
	switch {
	case len(out) == 0: // notifications only: the error is the POST's
		body = response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: rpcError{Code: mcpRefusalCode, Message: herr.Body.Message, Data: herr.Body}}
	case !batch:
		body = out[0]
	}
	writeJSON(w, herr.Status, body)
}
