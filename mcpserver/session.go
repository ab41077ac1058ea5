package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connections names the run_code session of each MCP connection
// (Options.Sessions): one per connection, made at its first run_code
// call and closed when the connection ends, so that two connections never
// share a state.
type connections struct {
	mu    sync.Mutex
	names map[*mcp.ServerSession]string
	next  atomic.Uint64
}

// sessionOf returns the session name of the connection ss, naming it at
// its first call and arranging for the session to be closed (by close)
// when ss ends.
func (c *connections) sessionOf(ss *mcp.ServerSession, close func(name string)) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name, ok := c.names[ss]; ok {
		return name
	}
	if c.names == nil {
		c.names = make(map[*mcp.ServerSession]string)
	}
	name := fmt.Sprintf("mcp-connection-%d", c.next.Add(1))
	c.names[ss] = name
	go func() {
		_ = ss.Wait() // how the connection ended does not matter: its state goes
		c.mu.Lock()
		delete(c.names, ss)
		c.mu.Unlock()
		close(name)
	}()
	return name
}

// sessionName is the run_code session of the call's connection, or ""
// without Options.Sessions (or without a connection).
func (r *router) sessionName(req *mcp.CallToolRequest) string {
	if !r.opts.Sessions || req.Session == nil {
		return ""
	}
	return r.conns.sessionOf(req.Session, func(name string) {
		// The connection is gone: there is no caller's context left, and
		// nobody to tell but the log.
		if _, err := r.e.CloseSession(context.Background(), r.scope, name); err != nil {
			slog.Default().Warn("ptcx mcp: the session of a closed connection could not be deleted from the session store", "error", err)
		}
	})
}
