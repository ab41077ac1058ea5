package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ptcx/ptcx/internal/jsonrpcline"
)

// GuardHTTP wraps an MCP Streamable HTTP handler (mcp.NewStreamableHTTPHandler)
// so that every request of a JSON-RPC batch gets a response. A batch is one
// POST, served in one session, and the SDK drops a request that reuses the
// id of one before it in the batch without a reply; the guard takes such
// requests out of the batch and answers each with invalid request -32600,
// "request id 7 is already in flight", beside the SDK's responses to the
// rest (the first request with the id is answered as usual). A stateful
// handler refuses an id in flight across POSTs itself; a stateless one
// serves each POST in its own session.
//
// The guard reads a POST's body (at most maxBody bytes: a longer one goes
// to the handler as it is, for it to refuse) and changes nothing unless the
// body is a batch with a repeated request id. Then it holds the handler's
// answer: a JSON array (the handler's JSONResponse mode) gets the errors
// appended; an event stream gets them as events first, then streams on; any
// other answer (the handler refused the batch) is passed on as it is.
func GuardHTTP(h http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || int64(len(body)) > maxBody {
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			h.ServeHTTP(w, r)
			return
		}
		kept, refused := splitDuplicates(body)
		if refused == nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(kept))
		r.ContentLength = int64(len(kept))
		hw := &heldWriter{w: w, refused: refused}
		h.ServeHTTP(hw, r)
		hw.finish()
	})
}

// readCloser is a body read from r, closed by c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (b readCloser) Close() error { return b.c.Close() }

// splitDuplicates returns body without the requests of its batch whose id
// a request before them has, and a response for each of those; refused is
// nil when body is not a batch, or has no such request.
func splitDuplicates(body []byte) (kept []byte, refused [][]byte) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return body, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(trimmed, &items) != nil {
		return body, nil // the handler says what is wrong
	}
	seen := make(map[jsonrpc.ID]bool, len(items))
	keep := items[:0:0]
	for _, item := range items {
		m, p, _ := jsonrpcline.Parse(bytes.TrimSpace(item))
		if req, ok := m.(*jsonrpc.Request); ok && p == jsonrpcline.OK && req.IsCall() {
			if seen[req.ID] {
				refused = append(refused, duplicateReply(usableID(bytes.TrimSpace(item))))
				continue
			}
			seen[req.ID] = true
		}
		keep = append(keep, item)
	}
	if refused == nil {
		return body, nil
	}
	kept, _ = json.Marshal(keep) // cannot fail: each item is valid JSON
	return kept, refused
}

// heldWriter is the handler's ResponseWriter for a batch the guard took
// requests out of: it adds their responses to the handler's answer.
type heldWriter struct {
	w       http.ResponseWriter
	refused [][]byte
	status  int           // the handler's, once it wrote its header
	held    *bytes.Buffer // a JSON answer, held until the handler returns
	through bool          // the answer is passed on as written
}

func (h *heldWriter) Header() http.Header { return h.w.Header() }

func (h *heldWriter) WriteHeader(status int) {
	if h.status != 0 {
		return
	}
	h.status = status
	ct, _, _ := mime.ParseMediaType(h.w.Header().Get("Content-Type"))
	switch {
	case status == http.StatusOK && ct == "application/json":
		h.held = &bytes.Buffer{}
		h.w.Header().Del("Content-Length")
	case status == http.StatusOK && ct == "text/event-stream":
		h.through = true
		h.w.WriteHeader(status)
		for _, r := range h.refused {
			_, _ = h.w.Write(append(append([]byte("event: message\ndata: "), r...), "\n\n"...))
		}
		h.flush()
	default:
		h.through = true
		h.w.WriteHeader(status)
	}
}

func (h *heldWriter) Write(p []byte) (int, error) {
	if h.status == 0 {
		h.WriteHeader(http.StatusOK)
	}
	if h.held != nil {
		return h.held.Write(p)
	}
	return h.w.Write(p)
}

// Flush passes a stream's events on; a held answer waits for finish.
func (h *heldWriter) Flush() {
	if h.through {
		h.flush()
	}
}

func (h *heldWriter) flush() {
	if f, ok := h.w.(http.Flusher); ok {
		f.Flush()
	}
}

// finish writes a held answer, the refused requests' responses appended
// to its array. An answer that is not an array (never the SDK's to a
// batch) goes as the handler wrote it.
func (h *heldWriter) finish() {
	if h.held == nil {
		return
	}
	out := bytes.TrimSpace(h.held.Bytes())
	if len(out) >= 2 && out[0] == '[' && out[len(out)-1] == ']' {
		joined := bytes.Join(h.refused, []byte(","))
		inner := bytes.TrimSpace(out[1 : len(out)-1])
		merged := make([]byte, 0, len(out)+len(joined)+1)
		merged = append(merged, '[')
		if len(inner) > 0 {
			merged = append(append(merged, inner...), ',')
		}
		out = append(append(merged, joined...), ']')
	}
	h.w.WriteHeader(h.status)
	_, _ = h.w.Write(out)
}
