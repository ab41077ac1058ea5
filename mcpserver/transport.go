package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/internal/jsonrpcline"
)

// MaxLineBytes is the longest message StdioTransport accepts, the SDK's
// default frame limit. A longer line is answered with an error and skipped.
const MaxLineBytes = mcp.DefaultMaxLineLength

// StdioTransport returns the transport ptcx serves MCP over: newline-delimited
// JSON-RPC on in and out, as mcp.IOTransport, except that a line that is not
// one JSON-RPC message does not end the session. mcp.IOTransport stops
// reading at the first such line; here the line is answered with a JSON-RPC
// error (parse error -32700 for text that is not JSON, invalid request -32600
// for JSON that is not a JSON-RPC message, a batch, or a line over
// MaxLineBytes; the id is the line's own when it has a usable one, else null)
// and the server reads on. Blank lines are ignored.
//
// Batches are refused: the protocol dropped them in 2025-06-18, and the SDK
// ends the session on one after negotiating that version or later.
//
// A request whose id is that of a request not answered yet is answered
// with invalid request -32600, "request id 7 is already in flight", and
// not handed to the SDK (which would drop it without a reply); the first
// is answered as usual, and its id may be reused once it is.
//
// in and out are closed when the session ends. Pass os.Stdin and os.Stdout
// to serve a client that started this process.
func StdioTransport(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	flight := &inFlight{}
	w := &lockedWriter{w: out, flight: flight}
	return &mcp.IOTransport{
		Reader: &lineGuard{src: bufio.NewReader(in), closer: in, reply: untracked{w}, flight: flight},
		Writer: w,
		// The guard enforces MaxLineBytes per line and hands the SDK one
		// message at a time, so the SDK's own frame limit (which ends the
		// session) is not needed.
		MaxLineLength: -1,
	}
}

// lockedWriter serialises writes to out: the SDK writes each message in one
// Write, and the guard writes its error replies between them (untracked).
// A response the SDK writes ends its request's flight.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.WriteCloser
	flight *inFlight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if id, ok := jsonrpcline.ResponseID(bytes.TrimSpace(p)); ok {
		l.flight.done(id)
	}
	return l.write(p)
}

func (l *lockedWriter) write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// untracked writes the guard's replies, which end no request's flight: a
// refused duplicate's id stays the first request's.
type untracked struct{ l *lockedWriter }

func (u untracked) Write(p []byte) (int, error) { return u.l.write(p) }

func (l *lockedWriter) Close() error { return l.w.Close() }

// lineGuard hands the SDK only lines that are one JSON-RPC message each,
// answering every other line itself. Read is called by one goroutine (the
// SDK's reader).
type lineGuard struct {
	src     *bufio.Reader
	closer  io.Closer
	reply   io.Writer
	flight  *inFlight // the requests handed to the SDK and not answered yet
	pending []byte    // an accepted message and its newline, not yet all read
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, err := jsonrpcline.Read(g.src, MaxLineBytes)
		if errors.Is(err, jsonrpcline.ErrTooLong) {
			g.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over %d bytes", MaxLineBytes))
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if id, code, msg := g.check(line); code != 0 {
				g.refuse(id, code, msg)
			} else {
				g.pending = append(bytes.TrimSpace(line), '\n')
			}
		}
		if err != nil && len(g.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

func (g *lineGuard) Close() error { return g.closer.Close() }

// refuse writes a JSON-RPC error response. A failed write is left for the
// SDK to discover on its next write.
func (g *lineGuard) refuse(id json.RawMessage, code int64, msg string) {
	_, _ = g.reply.Write(append(errorReply(id, code, msg), '\n'))
}

// check reports why line is not one JSON-RPC message the SDK can read, or
// is a request whose id is in flight: a non-zero code, the message, and
// the line's id when it has a usable one. A request it lets through is in
// flight from then on.
func (g *lineGuard) check(line []byte) (id json.RawMessage, code int64, msg string) {
	line = bytes.TrimSpace(line)
	switch m, p, err := jsonrpcline.Parse(line); p {
	case jsonrpcline.OK:
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() && !g.flight.add(req.ID) {
			id := usableID(line)
			return id, jsonrpc.CodeInvalidRequest, duplicateMessage(id)
		}
		return nil, 0, ""
	case jsonrpcline.NotJSON:
		return nil, jsonrpc.CodeParseError, "parse error: the line is not JSON (MCP over stdio is one JSON-RPC message per line)"
	case jsonrpcline.Batch:
		return nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: send one message per line"
	case jsonrpcline.NotObject:
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: a JSON-RPC message is a JSON object"
	default:
		return usableID(line), jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
}

// usableID returns the "id" of a JSON object when it is a string or an
// integer, the only ids JSON-RPC allows a reply to carry.
func usableID(obj []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(obj, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return nil
	}
	if _, err := jsonrpc.MakeID(v); err != nil {
		return nil
	}
	return m.ID
}
