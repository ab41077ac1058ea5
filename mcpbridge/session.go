package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is the version the bridge asks for: the last one with the
// initialize handshake, which every stdio server speaks or negotiates down
// from.
const protocolVersion = "2025-11-25"

// session is one upstream process and the MCP client session over its
// stdio. Once the process exits or its stdout ends, the session is dead for
// good: the supervisor kills what is left of the process group, closes the
// client session and closes done. A new session is a new process.
type session struct {
	proc  *process
	guard *stdoutGuard
	cs    *mcp.ClientSession
	done  chan struct{}

	answered  atomic.Bool            // some call got an answer
	killedFor atomic.Pointer[string] // why the bridge killed it, if it did
}

// startSession starts the upstream and initialises an MCP session with it,
// within timeout. On failure nothing is left running, and the error says
// why, with the end of the upstream's stderr. Unsolicited messages dropped
// over their budget are counted in dropped. listChanged is called (on the
// SDK's goroutine: it must not block) when the upstream sends
// notifications/tools/list_changed.
func startSession(ctx context.Context, argv []string, timeout time.Duration, dropped *atomic.Int64, listChanged func()) (*session, error) {
	p, err := startProcess(argv)
	if err != nil {
		return nil, startError(argv, err)
	}
	s := &session{proc: p, guard: newStdoutGuard(p.stdout, dropped), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "ptcx", Version: "mcpbridge"}, &mcp.ClientOptions{
		// The bridge offers the upstream nothing: no roots, no sampling,
		// no elicitation.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			listChanged()
		},
	})
	transport := &mcp.IOTransport{Reader: s.guard, Writer: p.stdin, MaxLineLength: -1}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		why := s.failure(ctx, err, "the MCP initialize request", timeout)
		p.kill()
		p.closePipes()
		return nil, errors.New(why)
	}
	s.cs = cs
	go s.supervise()
	return s, nil
}

// supervise waits for the session to die (the process exits, or its stdout
// ends or breaks the protocol), then makes sure nothing is left: it kills
// the process group, closes the client session (which fails the calls still
// in flight) and closes done.
func (s *session) supervise() {
	select {
	case <-s.proc.exited:
	case <-s.guard.ended:
	}
	s.proc.kill()
	// With the group dead its stdout ends once what it wrote is read; a
	// process that left the group may still hold it, so do not wait for
	// that forever.
	t := time.NewTimer(exitGrace)
	select {
	case <-s.guard.ended:
	case <-t.C:
	}
	t.Stop()
	_ = s.guard.Close()
	_ = s.cs.Close()
	close(s.done)
}

// alive reports whether the session can still take calls.
func (s *session) alive() bool {
	_, ended := s.guard.hasEnded()
	return !ended && !s.proc.hasExited()
}

// kill ends the session at once, for the reason given, and waits until it
// is cleaned up.
func (s *session) kill(reason string) {
	s.killedFor.Store(&reason)
	s.proc.kill()
	<-s.done
}

// stop ends the session politely (stdin closed, then SIGTERM, then
// SIGKILL) and waits until it is cleaned up.
func (s *session) stop() {
	s.proc.stop()
	<-s.done
}

// deathText says how a dead session died.
func (s *session) deathText() string {
	if r := s.killedFor.Load(); r != nil {
		return *r
	}
	if cause, _ := s.guard.hasEnded(); cause != "" {
		return "it broke the protocol: " + cause
	}
	if text, ok := s.proc.exitText(); ok {
		return "it exited (" + text + ")"
	}
	return "it closed its stdout"
}

// failure explains why request (what was asked, for the message) failed
// with err: the upstream answered with a JSON-RPC error, broke the protocol,
// did not answer within timeout (ctx's deadline), exited, or closed its
// stdout. The end of its stderr follows.
func (s *session) failure(ctx context.Context, err error, request string, timeout time.Duration) string {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return fmt.Sprintf("it answered %s with an error: %s", request, werr.Message) + s.proc.stderrText()
	}
	if cause, ended := s.guard.hasEnded(); ended && cause != "" {
		return "it broke the protocol: " + cause + s.proc.stderrText()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("it did not answer %s within %s", request, seconds(timeout)) + s.proc.stderrText()
	}
	if ctx.Err() != nil {
		return fmt.Sprintf("%s was cancelled", request)
	}
	if text, ok := s.proc.exitText(); ok {
		return "it exited (" + text + ")"
	}
	if _, ended := s.guard.hasEnded(); ended {
		return "it closed its stdout" + s.proc.stderrText()
	}
	return err.Error() + s.proc.stderrText()
}
