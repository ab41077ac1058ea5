package ptcx

import (
	"encoding/json"

	"github.com/ptcx/ptcx/api"
)

// Call is one model-direct tool call, as the model emitted it. The wire
// decoders (OpenAICalls, ResponsesCalls, AnthropicCalls) fill ID with the
// model's own id for the call, which the matching result encoder echoes.
type Call struct {
	// ID identifies the call; empty means "mint one".
	ID string
	// Scope is the caller's scope; empty means the deployment.
	Scope string
	// Name is the tool name the model used.
	Name string
	// Args is the arguments' JSON text; empty means {}.
	Args json.RawMessage
	// Seed, for a run_code call, runs its program in a deterministic world
	// seeded with it (see WithSeed, which it overrides); nil: the host's.
	Seed *uint64
	// Session, for a run_code call, names the session its program runs in
	// (WithSessions): the programs of one session in one scope share
	// their top-level declarations and globals. Empty: a fresh state.
	Session string
	// Plan, for a run_code call, binds its program to an approved plan
	// (Host.Plan, then a person's edits: tools or calls removed): another
	// program is refused with DENIED before it runs, a call the plan does
	// not allow is DENIED and reaches nothing, a call it allows needs no
	// approval. A plan cannot bind a run in a session. Nil: unbound.
	Plan *Plan

	// invalid is why a decoded wire item cannot run (no id, no name, ...);
	// Execute returns it as the result. Only the decoders set it.
	invalid *Error
}

// invalidCall is a wire item that names a call but cannot be executed.
func invalidCall(id, name, format string, args ...any) Call {
	return Call{ID: id, Name: name, invalid: api.Errorf(api.CodeInvalidArgs, format, args...)}
}

// Problem reports why a decoded call will not run (nil: it will be
// executed).
func (c Call) Problem() *Error { return c.invalid }
