package executor

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/sdkgen"
)

// create is phase 1: mint the call's identity, resolve what the name means
// for this caller, check the arguments are a JSON object, and apply the
// collapse — before any policy can see the call.
func (x *execution) create(ctx context.Context) bool {
	x.created = true
	if x.req.ID == "" {
		x.req.ID = x.e.cfg.newID()
	}
	nested := x.parent.liveFor(x.e)
	x.req.Nested = nested
	if nested {
		x.req.Parent = x.parent.callID
		x.req.Scope = x.parent.scope
	}

	if nested {
		x.res = x.parent.resolveNested(x.e, x.req.Tool)
	} else {
		x.res = x.e.resolve(x.req.Scope, x.req.Tool, false)
	}
	x.def = x.res.Definition
	x.fin = x.def

	switch x.res.Refusal {
	case resolve.UnknownScope:
		x.fail(api.Errorf(api.CodeUnknownTool, "unknown tool %q: scope %q does not exist", x.req.Tool, x.req.Scope))
		return false
	case resolve.NotVisible:
		x.fail(api.Errorf(api.CodeUnknownTool, "unknown tool %q", x.req.Tool))
		return false
	}

	if perr := resolve.ReadArgs(x.req.Args, &x.in); perr != nil {
		x.fail(perr)
		return false
	}
	if x.def != nil && x.def.Transport() {
		x.args = x.in.Map() // runargs.go reads the program and its limits
	}

	switch x.res.Refusal {
	case resolve.Collapsed:
		if ctx.Err() != nil {
			// The cancellation contract outranks the collapse: the caller
			// learns its call was aborted, and the visible tool's finalizer
			// still applies.
			x.fin = x.res.Visible
			x.fail(aborted(ctx, api.CodeAbortedBeforeDispatch, "the call was cancelled before it was dispatched"))
			return false
		}
		x.fail(&api.Error{Code: api.CodeUnknownTool, Message: collapsedMessage(x.res.Visible)})
		return false
	case resolve.NoRecursion:
		x.fail(api.Errorf(api.CodeUnknownTool, "unknown tool %q: a program cannot call run_code; call the tools it needs directly through tools.<name>(...)", x.req.Tool))
		return false
	}
	return true
}

// collapsedMessage names the right route for a tool a model called directly
// in ptc mode.
func collapsedMessage(d *resolve.Definition) string {
	name := d.Name()
	return fmt.Sprintf("unknown tool %q: only run_code is callable directly — call %s from inside a run_code program instead, e.g. %s",
		name, name, sdkgen.RouteExample(d.Schema()))
}

func aborted(ctx context.Context, code api.Code, msg string) *api.Error {
	return &api.Error{Code: code, Message: msg, Cause: context.Cause(ctx)}
}
