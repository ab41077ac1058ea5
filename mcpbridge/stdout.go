package mcpbridge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptcx/ptcx/internal/jsonrpcline"
)

// maxLineBytes is the longest message an upstream may write, the SDK's
// default frame limit.
const maxLineBytes = mcp.DefaultMaxLineLength

// errBroken is what the guard's Read returns once the upstream broke the
// protocol; the session's cause says how.
var errBroken = errors.New("the upstream broke the protocol")

// stdoutGuard sits between an upstream's stdout and the SDK. It hands the
// SDK one JSON-RPC message at a time, and ends the stream at the first line
// that is not one: an MCP server's stdout carries only protocol messages,
// and what follows garbage cannot be trusted. Either way it records why the
// stream ended and closes ended before the SDK sees the end, so that a call
// that fails because of it finds the cause already recorded. Unsolicited
// messages past their budget (unsolicited.go) are dropped before the SDK
// sees them, and counted in dropped.
type stdoutGuard struct {
	src     *bufio.Reader
	closer  io.Closer
	pending []byte
	budget  *budget
	dropped *atomic.Int64

	once  sync.Once
	ended chan struct{}
	cause string // set before ended is closed: "" for the end of input
}

func newStdoutGuard(stdout io.ReadCloser, dropped *atomic.Int64) *stdoutGuard {
	return &stdoutGuard{src: bufio.NewReader(stdout), closer: stdout, budget: newBudget(time.Now), dropped: dropped, ended: make(chan struct{})}
}

func (g *stdoutGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, err := jsonrpcline.Read(g.src, maxLineBytes)
		if errors.Is(err, jsonrpcline.ErrTooLong) {
			g.end(fmt.Sprintf("it wrote a line of more than %d bytes to stdout", maxLineBytes))
			return 0, errBroken
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 && !g.drop(trimmed) {
			if why := notJSONRPC(trimmed); why != "" {
				g.end(fmt.Sprintf("it wrote %s to stdout, where only JSON-RPC messages may go: %s", why, quoteStart(trimmed)))
				return 0, errBroken
			}
			g.pending = append(trimmed, '\n')
		}
		if err != nil && len(g.pending) == 0 {
			g.end("")
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// drop reports whether line is a notification over the budget, and counts
// it if so. Requests the upstream makes (ping, roots/list) are never
// dropped: the upstream waits for their answers.
func (g *stdoutGuard) drop(line []byte) bool {
	if m, ok := jsonrpcline.Scan(line); !ok || !m.Notification() || g.budget.take() {
		return false
	}
	g.dropped.Add(1)
	return true
}

// Close closes the upstream's stdout (our end).
func (g *stdoutGuard) Close() error { return g.closer.Close() }

func (g *stdoutGuard) end(cause string) {
	g.once.Do(func() {
		g.cause = cause
		close(g.ended)
	})
}

// hasEnded reports whether the stream ended, and the protocol violation that
// ended it ("" for the end of input or a read error).
func (g *stdoutGuard) hasEnded() (cause string, ended bool) {
	select {
	case <-g.ended:
		return g.cause, true
	default:
		return "", false
	}
}

// notJSONRPC says what line is when it is not one JSON-RPC message, or "".
func notJSONRPC(line []byte) string {
	switch p, _ := jsonrpcline.Classify(line); p {
	case jsonrpcline.OK:
		return ""
	case jsonrpcline.NotJSON:
		return "text that is not JSON"
	case jsonrpcline.Batch:
		return "a JSON-RPC batch (not supported)"
	default:
		return "JSON that is not a JSON-RPC message"
	}
}

// quoteStart quotes the first bytes of b for a message.
func quoteStart(b []byte) string {
	const show = 120
	if len(b) > show {
		return fmt.Sprintf("%q…", b[:show])
	}
	return fmt.Sprintf("%q", b)
}
