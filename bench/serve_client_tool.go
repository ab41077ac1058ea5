package bench

import (
	"context"

	"github.com/ptcx/ptcx/serve"
)

// serveClientTool measures serve_client_tool: each sample one execution
// whose program calls the client tool "ask" once, driven as a client
// drives it (serve/client's Run): the POST answers pending, the bench
// posts the tool's result at once, and that answer is the settled
// execution (ns).
func (b *PTCX) serveClientTool(ctx context.Context, j Job) (Raw, error) {
	s, err := b.ensureServe(ctx)
	if err != nil {
		return Raw{}, err
	}
	tools := []serve.ClientTool{askTool}
	return latency(ctx, j, func(ctx context.Context, p Program) error { return s.execute(ctx, p, tools) })
}
