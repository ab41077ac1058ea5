package cli

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/wasmhost"
)

// NewSession makes a run_code session (ptcx mcp --session), starting the
// sandbox first if no program has yet.
func (l *lazyRuntime) NewSession(ctx context.Context) (*wasmhost.Session, error) {
	l.start(ctx)
	if l.err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", l.err)
	}
	return l.rt.NewSession(ctx)
}
