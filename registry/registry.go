package registry

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
)

// Registry holds tools and scopes. It is safe for concurrent use; changes are
// seen by executions that resolve after them.
type Registry struct {
	mu       sync.RWMutex
	changes  atomic.Uint64 // counted as mu is taken to change scopes (resolve.Changes)
	scopes   map[string]*scope
	describe Describer
	// languages are the languages run_code runs (SetRunCodeLanguages):
	// its advertised schema names them when there are more than one.
	languages []api.Language
}

// New returns a Registry holding only the Deployment scope (mode native until
// declared) and no tools.
func New() *Registry {
	return &Registry{scopes: map[string]*scope{Deployment: {id: Deployment, tools: map[string]*resolve.Definition{}}}}
}

// NewScope adds a scope under parent (Deployment for a top-level scope).
func (r *Registry) NewScope(id, parent string) error {
	if !scopeName.MatchString(id) {
		return api.Errorf(api.CodeInvalidDefinition, "invalid scope name %q: must match %s", id, scopeName)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes.Add(1)
	if _, ok := r.scopes[id]; ok {
		return api.Errorf(api.CodeInvalidDefinition, "scope %q already exists", id)
	}
	p, err := r.scopeLocked(parent)
	if err != nil {
		return err
	}
	s := &scope{id: id, parent: p, tools: map[string]*resolve.Definition{}}
	p.children = append(p.children, s)
	r.scopes[id] = s
	return nil
}

// DeclareMode declares scope's mode. A scope declares its mode at most once;
// scopes below it inherit it unless they declare their own.
func (r *Registry) DeclareMode(scopeID string, m api.Mode) error {
	if _, err := api.ParseMode(string(m)); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes.Add(1)
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return err
	}
	if s.mode != "" {
		return api.Errorf(api.CodeInvalidDefinition, "scope %q already declares mode %s; a scope declares its mode once", scopeID, s.mode)
	}
	s.mode = m
	return nil
}

// Restrict narrows the tools scope inherits. Each named tool must be visible
// from the parent when the restriction is declared (so a typo cannot silently
// leave a tool allowed); run_code cannot be named. A scope declares at most
// one Restriction.
func (r *Registry) Restrict(scopeID string, rs Restriction) error {
	for _, n := range slices.Concat(rs.Allow, rs.Deny) {
		if n == RunCode {
			return api.Errorf(api.CodeInvalidDefinition, "scope %q: run_code cannot be restricted; its presence follows the scope's mode", scopeID)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes.Add(1)
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return err
	}
	switch {
	case s.parent == nil:
		return api.Errorf(api.CodeInvalidDefinition, "scope %q has no parent: there are no inherited tools to restrict", scopeID)
	case s.limited:
		return api.Errorf(api.CodeInvalidDefinition, "scope %q already declares a restriction", scopeID)
	}
	inherited := s.parent.visible()
	for _, n := range slices.Concat(rs.Allow, rs.Deny) {
		if inherited[n] == nil {
			return api.Errorf(api.CodeInvalidDefinition, "scope %q: restriction names %q, which it does not inherit from %q", scopeID, n, s.parent.id)
		}
	}
	deny := setOf(rs.Deny)
	for _, n := range rs.Allow {
		if deny[n] {
			return api.Errorf(api.CodeInvalidDefinition, "scope %q: %q is both allowed and denied", scopeID, n)
		}
	}
	if rs.Allow != nil {
		s.allow = setOf(rs.Allow)
	}
	s.deny = deny
	s.limited = true
	return nil
}

// Register compiles t and adds it to scope. The name must be unused on the
// scope's chain and below it; schemas that cannot be compiled fail with
// UNSUPPORTED_SCHEMA.
func (r *Registry) Register(scopeID string, t Tool) error {
	d, err := compile(t)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes.Add(1)
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return err
	}
	if other := s.registeredAbove(t.Name); other != nil {
		return api.Errorf(api.CodeInvalidDefinition, "tool %q is already registered on scope %q", t.Name, other.id)
	}
	if other := s.registeredBelow(t.Name); other != nil {
		return api.Errorf(api.CodeInvalidDefinition, "tool %q is already registered on scope %q, below %q", t.Name, other.id, scopeID)
	}
	s.tools[t.Name] = d
	return nil
}

// SetRunCodeDescriber installs the function that renders run_code's
// description per scope (typically the generated SDK). Nil restores
// DefaultRunCodeDescription.
func (r *Registry) SetRunCodeDescriber(d Describer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.describe = d
}

// SetRunCodeLanguages sets the languages run_code's advertised schema
// offers: with more than one, or one that is not TypeScript (a program
// without a language is TypeScript, so a Python-only deployment's programs
// must say "python"), it has a language property whose enum is them, in
// their order; with TypeScript alone or none (the default), it has none.
// The executor decides what runs (executor.Config.WithLanguages); this only
// says it.
func (r *Registry) SetRunCodeLanguages(ls []api.Language) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.languages = append([]api.Language(nil), ls...)
}

// Mode returns the scope's effective mode.
func (r *Registry) Mode(scopeID string) (api.Mode, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return "", err
	}
	return s.effectiveMode(), nil
}

// Chain returns scopeID and its ancestors, farthest (Deployment) first.
func (r *Registry) Chain(scopeID string) ([]string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, err := r.scopeLocked(scopeID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range s.chain() {
		ids = append(ids, c.id)
	}
	slices.Reverse(ids)
	return ids, nil
}

// Scopes returns every scope name, sorted.
func (r *Registry) Scopes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.scopes)
}

// scopeLocked finds a scope; "" means Deployment. r.mu must be held.
func (r *Registry) scopeLocked(id string) (*scope, error) {
	if id == "" {
		id = Deployment
	}
	s, ok := r.scopes[id]
	if !ok {
		return nil, api.Errorf(api.CodeInvalidDefinition, "unknown scope %q", id)
	}
	return s, nil
}
