package trace

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// The replay's tools: when a replay has no real tools, the program's calls
// still go through an executor (so that what the executor derives from
// them, such as a failure's "Calls made before the failure", is rebuilt
// byte for byte), to tools whose bodies answer from the trace. A body
// returns in the recorded completion order: the call completed k-th waits
// until the one completed (k-1)-th has been answered to the program.

// DefaultGateWait is how long a replayed call waits, by default, for the
// call completed before it in the trace: past it, the program is not going
// to make that call while this one is pending (it ran differently from the
// trace). ReplayConfig.GateWait changes it.
const DefaultGateWait = 30 * time.Second

// gates are the recorded calls and, by completion rank, whether each has
// been answered.
type gates struct {
	calls    []Call
	once     []sync.Once
	answered []chan struct{} // answered[k]: the call completed (k+1)-th
	wait     time.Duration   // how long a call waits for the one completed before it
}

func newGates(calls []Call, wait time.Duration) *gates {
	g := &gates{calls: calls, wait: wait, once: make([]sync.Once, len(calls)), answered: make([]chan struct{}, len(calls))}
	for i := range g.answered {
		g.answered[i] = make(chan struct{})
	}
	return g
}

// release marks the call at index i (in calls) answered.
func (g *gates) release(i int) {
	k := g.calls[i].Completed - 1
	g.once[k].Do(func() { close(g.answered[k]) })
}

// body answers a nested call from the trace, once every call completed
// before it in the trace has been answered.
func (g *gates) body(ctx context.Context, in api.Input) (api.Output, error) {
	i := nestedIndex(in.CallID)
	if i < 1 || i > len(g.calls) {
		return api.Output{}, api.Errorf(api.CodeInternal, "replay: the trace has no call %s (it has %d)", in.CallID, len(g.calls))
	}
	c := g.calls[i-1]
	if k := c.Completed - 1; k > 0 {
		select {
		case <-g.answered[k-1]:
		case <-ctx.Done():
			return api.Output{}, ctx.Err()
		case <-time.After(g.wait):
			prev := slices.IndexFunc(g.calls, func(p Call) bool { return p.Completed == k })
			return api.Output{}, api.Errorf(api.CodeInternal,
				"replay: call %d waited %v for call %d, completed before it in the trace, which the program has not made: the program did not run as recorded", i, g.wait, prev+1)
		}
	}
	if !c.OK {
		return api.Output{}, &api.Error{Code: c.Error.Code, Kind: c.Error.Kind, Message: c.Error.Message}
	}
	// The label the body raised: with the declaration the stand-in
	// carries, the executor labels the result as it did.
	return api.Output{Value: c.Value, Labels: *orLowest(c.Raised)}, nil
}

// replayRegistry is a registry whose deployment scope (mode ptc) holds a
// tool answering from g for every tool the record binds or calls.
// Each carries pols[name], so that the executor recomputes the labels and
// denials the record has.
func replayRegistry(rec *Record, g *gates, pols map[string]policy.Declaration) (*registry.Registry, error) {
	reg := registry.New()
	if err := reg.DeclareMode(registry.Deployment, api.ModePTC); err != nil {
		return nil, err
	}
	names := slices.Clone(rec.Tools)
	for _, c := range rec.Calls {
		names = append(names, c.Tool)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		t := registry.Tool{Name: name, Description: "The recorded answers of " + name + ".", ConcurrencySafe: true, Body: g.body, Policy: pols[name]}
		if err := reg.Register(registry.Deployment, t); err != nil {
			return nil, fmt.Errorf("trace: record %s: tool %q cannot be replayed: %w", rec.ID, name, err)
		}
	}
	return reg, nil
}
