package jsonrpcline

import "encoding/json"

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
	// line is valid JSON: only strings and nesting need tracking. A key is
	// the first string after '{' or ',' at depth 1.
	depth, expectKey := 0, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '{', '[':
			depth++
			expectKey = c == '{' && depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			end, escaped := stringEnd(line, i+1)
			if depth == 1 && expectKey {
				if escaped {
					return Members{}, false
				}
				switch string(line[i+1 : end]) {
				case "method":
					m.Method = true
				case "id":
					m.ID = true
				}
				expectKey = false
			}
			i = end
		}
	}
	return m, true
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
