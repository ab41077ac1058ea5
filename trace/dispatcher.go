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

	reads []Read // the record's handle reads, in order (handles.go)

	mu        sync.Mutex
	replies   []func(wasmhost.CallResult) // by index in calls, once made
	next      int                         // into order
	made      []Call                      // every call the program made, in submission order
	readsMade []Read                      // every read of a recorded call's handle, in order
	refs      map[string]heldRef          // the recorded calls' handles the program holds, by ref
	completed int
	div       *Divergence
}

func newReplayDispatcher(rec *Record, cancel context.CancelCauseFunc) *replayDispatcher {
	calls := rec.Calls
	order := make([]int, len(calls))
	for i, c := range calls {
		order[c.Completed-1] = i // Decode and the recorder give ranks 1…n
	}
	return &replayDispatcher{calls: calls, order: order, reads: rec.Reads, cancel: cancel,
		replies: make([]func(wasmhost.CallResult), len(calls)), refs: map[string]heldRef{}}
}

// stopped is what a call made after a divergence gets.
const stopped = "replay stopped: the program diverged from its trace"

func (d *replayDispatcher) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	if name == wasmhost.HandleCall {
		d.read(args, done) // handles.go
		return
	}
	d.mu.Lock()
	i := len(d.made)
	// A recorded call's arguments have the values of the handles passed in
	// them; the program's have markers.
	real, passed := d.substitute(args)
	d.made = append(d.made, Call{Index: i + 1, Tool: name, Args: real})
	if d.div != nil {
		d.mu.Unlock()
		done(wasmhost.CallResult{Message: stopped})
		return
	}
	if i >= len(d.calls) {
		if d.fallback != nil {
			d.mu.Unlock()
			d.fallback.Dispatch(name, real, func(r wasmhost.CallResult) { // the handles it holds are the dispatcher's
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
	case !sameJSON(c.Args, real):
		d.diverge(&Divergence{Index: i + 1, Reason: "args", ExpectedTool: c.Tool, ExpectedArgs: c.Args, GotTool: name, GotArgs: real}, done)
		return
	case !slices.Equal(passedCalls(c), passed):
		d.diverge(&Divergence{Index: i + 1, Reason: "handles", ExpectedTool: c.Tool, ExpectedArgs: c.Args, GotTool: name, GotArgs: real,
			ExpectedHandles: passedCalls(c), GotHandles: passed}, done)
		return
	}
	if d.through != nil {
		d.mu.Unlock()
		d.through.Dispatch(name, args, func(r wasmhost.CallResult) { // the executor puts in the handles' values
			d.mu.Lock()
			d.completed++
			m := &d.made[i]
			m.ID, m.Parent, m.OK, m.Completed = c.ID, c.Parent, r.OK, d.completed
			switch {
			case r.OK && r.Handle:
				m.Value = c.Value // what the stand-in answered, which the executor holds
				var e envelope
				_ = json.Unmarshal(r.Value, &e) // the executor made it
				d.refs[e.Ref] = heldRef{call: i + 1, labels: e.Labels}
			case r.OK:
				m.Value = r.Value
			default:
				m.Error = &Error{Code: r.Code, Message: r.Message}
			}
			if r.OK && c.OK && r.Handle != (c.Handle != nil) && d.div == nil {
				div := &Divergence{Index: i + 1, Reason: "handle", ExpectedTool: c.Tool, ExpectedArgs: c.Args, GotTool: name, GotArgs: real,
					ExpectedHandle: c.Handle != nil, GotHandle: r.Handle}
				d.div = div
				d.mu.Unlock()
				done(wasmhost.CallResult{Message: div.Error()})
				d.gates.release(i)
				d.cancel(div)
				return
			}
			d.mu.Unlock()
			done(r)
			d.gates.release(i)
		})
		return
	}
	d.replies[i] = done
	var ready []int
	var answers []wasmhost.CallResult
	for d.next < len(d.order) && d.replies[d.order[d.next]] != nil {
		j := d.order[d.next]
		ready = append(ready, j)
		d.next++
		d.completed++
		m := &d.made[j]
		m.ID, m.Parent, m.OK, m.Value, m.Error, m.Completed = d.calls[j].ID, d.calls[j].Parent, d.calls[j].OK, d.calls[j].Value, d.calls[j].Error, d.completed
		m.Handle = d.calls[j].Handle
		if a := answer(d.calls[j]); d.calls[j].Handle != nil && a.OK {
			answers = append(answers, d.holdAnswer(d.calls[j])) // handles.go
		} else {
			answers = append(answers, a)
		}
	}
	d.mu.Unlock()
	for k, j := range ready {
		d.replies[j](answers[k])
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
	if k := len(d.readsMade); d.div == nil && k < len(d.reads) {
		want := d.reads[k]
		d.div = &Divergence{Index: want.Call, Reason: "read", Read: k + 1, ExpectedRead: &want}
		d.describeRead(d.div)
	}
	return slices.Clone(d.made), d.div
}

// madeReads returns the reads of recorded calls' handles the program made.
func (d *replayDispatcher) madeReads() []Read {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.readsMade)
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
