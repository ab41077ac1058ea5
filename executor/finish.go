package executor

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

// finish is phase 9: apply the finalizer once, check the value against the
// output schema, record a nested call in its run's ledger, emit the one
// result notification, and return the result.
// A body that gave no text gets its value rendered within the deployment's
// output limit (registry.RenderText): a value whose indented form would be
// longer is shown unindented, so a deeply nested value costs the host no
// more than itself.
func (x *execution) finish(ctx context.Context) api.Result {
	r := api.Result{ID: x.req.ID, Tool: x.req.Tool}
	if x.err == nil {
		r.Value = x.out.Value
		r.Text = x.out.Text
		if r.Text == "" && x.textWanted() {
			r.Text = registry.RenderText(r.Value, x.e.limits.OutputBytes)
		}
	} else {
		r.Err = x.err
		r.Text = x.err.Message
	}

	finalized := false
	if x.fin != nil {
		if f := x.fin.Finalizer(); f != nil {
			finalized = true
			in := r
			err := safely(func() error { r = f(context.WithoutCancel(ctx), in); return nil })
			if err != nil {
				failed := internal("the finalizer of "+x.req.Tool+" failed", err)
				r = api.Result{Err: failed, Text: failed.Message}
			}
			r.ID, r.Tool = x.req.ID, x.req.Tool
		}
	}

	// run_code's own value is built by runCode in the shape of its schema:
	// checking it again would decode a result of up to the hard cap into a
	// tree (tens of times its size) for nothing.
	if r.Err == nil && x.def != nil && !(x.def.Transport() && !finalized) {
		if len(r.Value) == 0 {
			r.Value = json.RawMessage("null")
		}
		if err := x.def.ValidateOutput(r.Value); err != nil {
			err.Message = x.req.Tool + ": " + err.Message
			r = api.Result{ID: x.req.ID, Tool: x.req.Tool, Err: err, Text: err.Message}
		}
	}
	if r.Err != nil {
		r.Value = nil
		if r.Text == "" {
			r.Text = r.Err.Message
		}
	}
	// After the finalizer, which may not lower it (flow.go).
	raised := x.raised(r.Labels)
	r.Labels = r.Labels.Join(x.resultLabel(x.err == nil))
	if x.def != nil && x.def.Transport() { // run_code's alone: another body cannot claim one
		r.Ledger, r.Handles = x.out.Ledger, x.out.Handles
		if x.err != nil {
			r.Ledger = x.err.Ledger
		}
	}
	if x.req.Nested {
		args := x.req.Args
		if x.handleIn != nil { // the ledger is shown to the model: placeholders, not the handles' values
			args = x.handleIn.shown
		}
		x.parent.ledger.add(x.req.Tool, r, x.bodyTime, args, x.cost)
	}

	if len(x.e.cfg.onResult) > 0 {
		x.e.notifyResult(Notification{Request: x.req, Result: r, Duration: time.Since(x.start), Body: x.bodyTime, Seq: x.seq, Run: x.run.Load(), Plan: x.plan,
			Raised: raised, Handles: x.handleIDs()})
	}
	return r
}

func (e *Executor) notifyResult(n Notification) {
	for _, f := range e.cfg.onResult {
		_ = safely(func() error { f(n); return nil })
	}
}

// textWanted reports whether anyone reads the model text of a successful
// result: a model-direct caller always does; a program only sees the value,
// so a nested call renders its text only for a finalizer or a result
// listener.
func (x *execution) textWanted() bool {
	return !x.req.Nested || len(x.e.cfg.onResult) > 0 || (x.fin != nil && x.fin.Finalizer() != nil)
}
