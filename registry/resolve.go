package registry

import "github.com/ptcx/ptcx/api"

// Refusal says why a name did not resolve to something executable.
type Refusal int

const (
	// Resolved: the call may execute.
	Resolved Refusal = iota
	// NotVisible: no tool of that name is visible in the scope. UNKNOWN_TOOL,
	// no hint.
	NotVisible
	// UnknownScope: the scope does not exist, so nothing is visible.
	UnknownScope
	// Collapsed: the tool is visible, but the scope's mode is ptc and the
	// call is model-direct: only run_code may be called directly.
	Collapsed
	// NoRecursion: a program tried to call run_code.
	NoRecursion
)

// Resolution is the outcome of ResolveExecution.
type Resolution struct {
	// Definition is what may execute; nil unless Refusal is Resolved.
	Definition *Definition
	// Visible is what the name means in the scope, even when the call is
	// refused (its finalizer still applies to an aborted collapsed call).
	Visible *Definition
	// Refusal is Resolved or why not.
	Refusal Refusal
	// Mode is the scope's effective mode.
	Mode api.Mode
}

// ResolveExecution is the one resolver for the execution path: the executor
// uses it, and only it, to decide what a call may run (scheduling class,
// body, post-execute, result normalisation all read its Definition). nested
// is true only for a call carrying a live parent token of a run_code
// execution; the executor decides that.
//
// In ptc mode a model-direct call may only name run_code. A nested call may
// name any visible tool except run_code. native and both behave as if the
// collapse did not exist.
func (r *Registry) ResolveExecution(scopeID, name string, nested bool) Resolution {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return Resolution{Refusal: UnknownScope}
	}
	mode := s.effectiveMode()
	res := Resolution{Mode: mode}
	if name == RunCode {
		if !mode.HasRunCode() {
			res.Refusal = NotVisible
			return res
		}
		res.Visible = runCodeDefinition
		if nested {
			res.Refusal = NoRecursion
			return res
		}
		res.Definition = runCodeDefinition
		return res
	}
	res.Visible = s.lookup(name)
	switch {
	case res.Visible == nil:
		res.Refusal = NotVisible
	case mode == api.ModePTC && !nested:
		res.Refusal = Collapsed
	default:
		res.Definition = res.Visible
	}
	return res
}
