package mcpserver

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK drops, without a reply, a request whose id is the id of one of
// the session's requests it has not answered yet (its jsonrpc2 connection
// marks it a duplicate and then cannot address the error to anyone). The
// client would wait for that reply forever. StdioTransport and GuardHTTP
// answer such a request themselves, before the SDK sees it, with
// duplicateReply.

// inFlight is the ids of a connection's requests not answered yet: added
// as the guard hands a request to the SDK, removed as the SDK writes its
// response (before the bytes leave, so that a client that reuses an id
// once answered is never refused). Safe for concurrent use; the zero
// value is empty.
type inFlight struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]struct{}
}

// add records id, or reports false when it is in flight already.
func (f *inFlight) add(id jsonrpc.ID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.ids[id]; ok {
		return false
	}
	if f.ids == nil {
		f.ids = map[jsonrpc.ID]struct{}{}
	}
	f.ids[id] = struct{}{}
	return true
}

// done forgets id: its response is being written.
func (f *inFlight) done(id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ids, id)
}

// duplicateMessage is the error message for a request whose id (raw, as
// the client wrote it) is in flight already; duplicateReply the response.
func duplicateMessage(id json.RawMessage) string {
	return fmt.Sprintf("request id %s is already in flight: wait for its response before reusing the id", id)
}

func duplicateReply(id json.RawMessage) []byte {
	return errorReply(id, jsonrpc.CodeInvalidRequest, duplicateMessage(id))
}

// errorReply is a JSON-RPC error response; an id that is not JSON (nil)
// is null.
func errorReply(id json.RawMessage, code int64, msg string) []byte {
	if !json.Valid(id) {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct { // cannot fail: id is valid JSON
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	return b
}
