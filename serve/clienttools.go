package serve

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

// clientTool turns a client_tools entry into a tool of an execution's
// registry: its body records a pending call of the execution its run is
// of (execOf: the registry may be shared, clienttool_cache.go), waits
// (bounded by the pending timeout and the run's wall limit:
// pendingCall.await) for the client's result, and returns it to the
// program.
func (s *Server) clientTool(t ClientTool, timeout time.Duration) registry.Tool {
	return withClientPolicy(registry.Tool{ // policy.go
		Name:            t.Name,
		Description:     t.Description,
		InputSchema:     t.InputSchema,
		OutputSchema:    t.OutputSchema,
		ConcurrencySafe: true, // the client answers calls in any order
		Body: func(ctx context.Context, in api.Input) (api.Output, error) {
			x := execOf(ctx)
			if x == nil {
				return api.Output{}, api.Errorf(api.CodeInternal, "the client tool %s was called outside an execution", t.Name)
			}
			expires := time.Now().Add(timeout)
			if d, ok := ctx.Deadline(); ok && d.Before(expires) {
				expires = d
			}
			// A live wait's call the program now waits on live (it could not
			// park) is pending already (livewait.go).
			pc := x.adoptPending(in.CallID)
			if pc == nil {
				pc = &pendingCall{
					call:    PendingCall{ID: in.CallID, Kind: KindTool, Name: t.Name, Arguments: append(json.RawMessage(nil), in.Args...)},
					expires: expires,
					answer:  make(chan ToolResult, 1),
				}
				x.addPending(pc)
			}
			s.metrics.pendingCalls.WithLabelValues(x.tenant.name).Inc()
			defer s.metrics.pendingCalls.WithLabelValues(x.tenant.name).Dec()
			r, err := pc.await(ctx)
			x.removePending(pc)
			if err != nil {
				if ctx.Err() == nil {
					x.emit(EventExpired, map[string]string{"id": pc.call.ID})
				}
				return api.Output{}, err
			}
			if !r.OK {
				return api.Output{}, api.Errorf(api.CodeToolFailed, "%s", r.Error.Message)
			}
			v := r.Value
			if len(v) == 0 {
				v = json.RawMessage("null")
			}
			return api.Output{Value: v}, nil
		},
	}, t)
}
