package registry

import (
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
)

func init() {
	resolve.Install(func(reg any) resolve.Resolver { return reg.(*Registry).resolveExecution },
		func(reg any) resolve.Changes { return reg.(*Registry).changes.Load })
}

// resolveExecution is the one resolver for the execution path: the executor
// uses it, and only it (through resolve.Open), to decide what a call may run
// (scheduling class, body, post-execute, result normalisation all read its
// Definition). nested is true only for a call carrying a live parent token of
// a run_code execution; the executor decides that.
//
// In ptc mode a model-direct call may only name run_code. A nested call may
// name any visible tool except run_code. native and both behave as if the
// collapse did not exist.
func (r *Registry) resolveExecution(scopeID, name string, nested bool) resolve.Resolution {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return resolve.Resolution{Refusal: resolve.UnknownScope}
	}
	mode := s.effectiveMode()
	res := resolve.Resolution{Mode: mode}
	if name == RunCode {
		if !mode.HasRunCode() {
			res.Refusal = resolve.NotVisible
			return res
		}
		res.Visible = runCodeDefinition
		if nested {
			res.Refusal = resolve.NoRecursion
			return res
		}
		res.Definition = runCodeDefinition
		return res
	}
	res.Visible = s.lookup(name)
	switch {
	case res.Visible == nil:
		res.Refusal = resolve.NotVisible
	case mode == api.ModePTC && !nested:
		res.Refusal = resolve.Collapsed
	default:
		res.Definition = res.Visible
	}
	return res
}
