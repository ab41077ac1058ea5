package jsonrpcline

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Members says which of the JSON-RPC members that tell messages apart a
// line's top-level object has: "method" (a request or a notification) and
// "id" (a request or a response).
type Members struct {
	Method, ID bool
}

// Notification reports whether the members are those of a notification: a
// method and no id.
func (m Members) Notification() bool { return m.Method && !m.ID }

// Scan reports which members line's top-level object has, without decoding
// its values: a check that costs a fraction of DecodeMessage, for lines a
// reader may drop unread. ok is false when line is not a JSON object, or a
// top-level key has an escape (only a decoder can tell what it spells);
// then only Classify can tell. Keys are compared exactly, as JSON-RPC
// spells them.
func Scan(line []byte) (m Members, ok bool) {
	if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
		return Members{}, false
	}
	m, _, ok = members(line)
	return m, ok
}

// ResponseID returns the id of msg when it is a JSON-RPC response (an
// object with an "id" and no "method"), as the SDK compares ids
// (jsonrpc.MakeID: 7 and 7.0 are one id). msg is a message this process
// encoded, so it is valid JSON, which is not checked: it is read once,
// without decoding anything but the id, so that a large result costs a
// pass over its bytes and nothing more. On other input the answer may be
// wrong, but ResponseID returns.
func ResponseID(msg []byte) (jsonrpc.ID, bool) {
	if len(msg) == 0 || msg[0] != '{' {
		return jsonrpc.ID{}, false
	}
	m, raw, ok := members(msg)
	if !ok || m.Method || !m.ID {
		return jsonrpc.ID{}, false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return jsonrpc.ID{}, false
	}
	return id, true
}

// members reads the top-level keys of the object line, which starts with
// '{', and the text of the "id" member's value. ok is false when a
// top-level key has an escape. On text that is not JSON the answer is
// unspecified.
func members(line []byte) (m Members, id []byte, ok bool) {
	// Only strings and nesting need tracking. A key is the first string
	// after '{' or ',' at depth 1; a value runs from after its colon to
	// the next ',' at depth 1 or the object's end.
	depth, expectKey := 0, false
	idFrom := -1 // where the "id" member's value starts, while it is read
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '{', '[':
			depth++
			expectKey = c == '{' && depth == 1
		case '}', ']':
			if depth--; depth == 0 && idFrom >= 0 {
				id, idFrom = bytes.TrimSpace(line[min(idFrom, i):i]), -1
			}
		case ',':
			if depth == 1 && idFrom >= 0 {
				id, idFrom = bytes.TrimSpace(line[min(idFrom, i):i]), -1
			}
			expectKey = depth == 1
		case '"':
			end, escaped := stringEnd(line, i+1)
			if depth == 1 && expectKey {
				if escaped {
					return Members{}, nil, false
				}
				switch string(line[i+1 : end]) {
				case "method":
					m.Method = true
				case "id":
					m.ID = true
					if j := skipSpace(line, end+1); j < len(line) && line[j] == ':' {
						idFrom = j + 1
					}
				}
				expectKey = false
			}
			i = end
		}
	}
	return m, id, true
}

// skipSpace returns the first index from i that is not JSON's space.
func skipSpace(line []byte, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that closes the string whose
// contents start at i, and whether the string has an escape. The line is
// valid JSON, so the closing quote exists.
func stringEnd(line []byte, i int) (end int, escaped bool) {
	for ; i < len(line); i++ {
		switch line[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i, escaped
		}
	}
	return len(line), escaped
}
