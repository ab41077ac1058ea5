package registry

import (
	"encoding/json"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/policy"
)

// Get returns the public view of a visible tool, run_code included when the
// scope's mode is not native. Get shows the full visible set whatever the
// mode: it is for display and inspection, never for execution.
func (r *Registry) Get(scopeID, name string) (api.Schema, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return api.Schema{}, false
	}
	if name == RunCode {
		if !s.effectiveMode().HasRunCode() {
			return api.Schema{}, false
		}
		return r.runCodeSchemaLocked(s), true
	}
	d := s.lookup(name)
	if d == nil {
		return api.Schema{}, false
	}
	return publicSchema(d), true
}

// Policy returns the data-flow declaration of a visible tool (the zero
// Declaration for one that declares nothing), and false when scope has no
// such tool. Like Get, it is for inspection (a trace records it), never
// for execution.
func (r *Registry) Policy(scopeID, name string) (policy.Declaration, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil || name == RunCode {
		return policy.Declaration{}, false
	}
	d := s.lookup(name)
	if d == nil {
		return policy.Declaration{}, false
	}
	if p := d.Policy(); p != nil {
		return p.Declaration(), true
	}
	return policy.Declaration{}, true
}

// Schemas returns the full visible set of scope, sorted by name: every
// visible tool, plus run_code when the mode is not native.
func (r *Registry) Schemas(scopeID string) ([]api.Schema, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return nil, err
	}
	out := r.bindableLocked(s)
	if s.effectiveMode().HasRunCode() {
		out = insertSorted(out, r.runCodeSchemaLocked(s))
	}
	return out, nil
}

// Bindable returns the tools a run_code program in scope can call: every
// visible tool but run_code, sorted by name, whatever the mode.
func (r *Registry) Bindable(scopeID string) ([]api.Schema, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return nil, err
	}
	return r.bindableLocked(s), nil
}

// WireSchemas returns the advertised surface of scope, sorted by name: native
// → every visible tool; ptc → only run_code; both → every visible tool plus
// run_code. Render it with OpenAITools or AnthropicTools.
func (r *Registry) WireSchemas(scopeID string) ([]api.Schema, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return nil, err
	}
	switch s.effectiveMode() {
	case api.ModePTC:
		return []api.Schema{r.runCodeSchemaLocked(s)}, nil
	case api.ModeBoth:
		return insertSorted(r.bindableLocked(s), r.runCodeSchemaLocked(s)), nil
	default:
		return r.bindableLocked(s), nil
	}
}

func (r *Registry) bindableLocked(s *scope) []api.Schema {
	vis := s.visible()
	out := make([]api.Schema, 0, len(vis))
	for _, name := range sortedKeys(vis) {
		out = append(out, publicSchema(vis[name]))
	}
	return out
}

func (r *Registry) runCodeSchemaLocked(s *scope) api.Schema {
	sc := publicSchema(runCodeDefinition)
	sc.InputSchema = json.RawMessage(RunCodeInputSchema)
	if len(r.languages) > 1 || len(r.languages) == 1 && r.languages[0].Canonical() != api.LanguageTypeScript {
		sc.InputSchema = json.RawMessage(runCodeInputSchemaWith(r.languages))
	}
	if r.describe != nil {
		sc.Description = r.describe(s.id, DefaultRunCodeDescription, r.bindableLocked(s))
	}
	return sc
}

// publicSchema copies d's view so that callers cannot change the registry.
func publicSchema(d *resolve.Definition) api.Schema {
	sc := d.Schema()
	sc.InputSchema = clone(sc.InputSchema)
	sc.OutputSchema = clone(sc.OutputSchema)
	return sc
}

func insertSorted(list []api.Schema, s api.Schema) []api.Schema {
	i := 0
	for i < len(list) && list[i].Name < s.Name {
		i++
	}
	list = append(list, api.Schema{})
	copy(list[i+1:], list[i:])
	list[i] = s
	return list
}
