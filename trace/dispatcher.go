package trace

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/ptcx/ptcx/wasmhost"
)

// replayDispatcher checks a program's calls against the trace's and has
// them answered in the trace's completion order. Without real tools
// (through set), every call the trace has goes on to the executor, whose
// replay tools answer it (gates). With them (fallback set), the calls the
// trace has are answered here — a call's answer is released once it and
// every call completed before it have been made — and the calls past the
// trace go to the real tools.
type replayDispatcher struct {
	calls    []Call
	order    []int // order[k]: the index in calls of the call completed k-th
	cancel   context.CancelCauseFunc
	through  wasmhost.Dispatcher // the executor, whose tools answer from gates
	gates    *gates
	fallback wasmhost.Dispatcher // for calls past the trace; nil: they diverge

	mu        sync.Mutex
	replies   []func(wasmhost.CallResult) // by index in calls, once made
	next      int                         // into order
	made      []Call                      // every call the program made, in submission order
	completed int
	div       *Divergence
}

func newReplayDispatcher(calls []Call, cancel context.CancelCauseFunc) *replayDispatcher {
	order := make([]int, len(calls))
	for i, c := range calls {
		order[c.Completed-1] = i // Decode and the recorder give ranks 1…n
	}
	return &replayDispatcher{calls: calls, order: order, cancel: cancel, replies: make([]func(wasmhost.CallResult), len(calls))}
}

// stopped is what a call made after a divergence gets.
const stopped = "replay stopped: the program diverged from its trace"

func (d *replayDispatcher) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	d.mu.Lock()
	i := len(d.made)
	d.made = append(d.made, Call{Index: i + 1, Tool: name, Args: args})
	if d.div != nil {
		d.mu.Unlock()
		done(wasmhost.CallResult{Message: stopped})
		return
	}
	if i >= len(d.calls) {
		if d.fallback != nil {
			d.mu.Unlock()
			d.fallback.Dispatch(name, args, func(r wasmhost.CallResult) {
				d.mu.Lock()
				d.completed++
				c := &d.made[i]
				c.OK, c.Completed = r.OK, d.completed
				if r.OK {
					c.Value = r.Value
				} else {
					c.Error = &Error{Message: r.Message}
				}
				d.mu.Unlock()
				done(r)
			})
			return
		}
		d.diverge(&Divergence{Index: i + 1, Reason: "extra call", GotTool: name, GotArgs: args}, done)
		return
	}
	c := d.calls[i]
	switch {
	case c.Tool != name:
		d.diverge(&Divergence{Index: i + 1, Reason: "tool", ExpectedTool: c.Tool, ExpectedArgs: c.Args, GotTool: name, GotArgs: args}, done)
		return
	case !sameJSON(c.Args, args):
		d.diverge(&Divergence{Index: i + 1, Reason: "args", ExpectedTool: c.Tool, ExpectedArgs: c.Args, GotTool: name, GotArgs: args}, done)
		return
	}
	if d.through != nil {
		d.mu.Unlock()
		d.through.Dispatch(name, args, func(r wasmhost.CallResult) {
			d.mu.Lock()
			d.completed++
			m := &d.made[i]
			m.ID, m.Parent, m.OK, m.Completed = c.ID, c.Parent, r.OK, d.completed
			if r.OK {
				m.Value = r.Value
			} else {
				m.Error = &Error{Code: r.Code, Message: r.Message}
			}
			d.mu.Unlock()
			done(r)
			d.gates.release(i)
		})
		return
	}
	d.replies[i] = done
	var ready []int
	for d.next < len(d.order) && d.replies[d.order[d.next]] != nil {
		j := d.order[d.next]
		ready = append(ready, j)
		d.next++
		d.completed++
		m := &d.made[j]
		m.ID, m.Parent, m.OK, m.Value, m.Error, m.Completed = d.calls[j].ID, d.calls[j].Parent, d.calls[j].OK, d.calls[j].Value, d.calls[j].Error, d.completed
	}
	d.mu.Unlock()
	for _, j := range ready {
		d.replies[j](answer(d.calls[j]))
	}
}

// diverge records the divergence, answers the call with it and stops the
// run. It is called with d.mu held and releases it.
func (d *replayDispatcher) diverge(div *Divergence, done func(wasmhost.CallResult)) {
	d.div = div
	d.mu.Unlock()
	done(wasmhost.CallResult{Message: div.Error()})
	d.cancel(div)
}

// finish returns the calls the program made and the divergence, counting
// calls the trace has and the program did not make.
func (d *replayDispatcher) finish() ([]Call, *Divergence) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.made); d.div == nil && n < len(d.calls) {
		c := d.calls[n]
		d.div = &Divergence{Index: n + 1, Reason: "missing call", ExpectedTool: c.Tool, ExpectedArgs: c.Args}
	}
	return slices.Clone(d.made), d.div
}

// answer is what the program saw of a recorded call.
func answer(c Call) wasmhost.CallResult {
	if c.OK {
		return wasmhost.CallResult{OK: true, Value: c.Value}
	}
	return wasmhost.CallResult{Message: c.Error.Message}
}

func runCodeArgs(p Program) (json.RawMessage, error) {
	if len(p.Args) > 0 {
		return p.Args, nil
	}
	m := map[string]any{"code": p.Code}
	if p.Language != "" {
		m["language"] = p.Language
	}
	if p.Description != "" { // optional, and never empty when given
		m["description"] = p.Description
	}
	if len(p.Limits) > 0 {
		m["limits"] = p.Limits
	}
	return json.Marshal(m)
}
