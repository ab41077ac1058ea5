package registry

import (
	"regexp"
	"slices"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
)

// Deployment is the root scope every Registry starts with. Its mode is
// native until declared otherwise.
const Deployment = "deployment"

var scopeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:/@-]{0,127}$`)

// scope is one node of the scope tree: the deployment, a preset, an agent, a
// conversation, a tenant (docs/terms.md: a conversation, not a session, which
// is program state). All fields are guarded by Registry.mu.
type scope struct {
	id       string
	parent   *scope
	children []*scope

	mode    api.Mode // "" when not declared here
	allow   map[string]bool
	deny    map[string]bool
	limited bool // a Restriction was declared

	tools map[string]*resolve.Definition // registered on this scope
}

// chain returns the scope and its ancestors, nearest first.
func (s *scope) chain() []*scope {
	var out []*scope
	for c := s; c != nil; c = c.parent {
		out = append(out, c)
	}
	return out
}

// effectiveMode is the nearest declaration on the parent chain.
func (s *scope) effectiveMode() api.Mode {
	for c := s; c != nil; c = c.parent {
		if c.mode != "" {
			return c.mode
		}
	}
	return api.ModeNative
}

// inherits reports whether a tool from the parent passes s's restriction.
func (s *scope) inherits(name string) bool {
	if s.deny[name] {
		return false
	}
	return s.allow == nil || s.allow[name]
}

// lookup finds a visible tool by name (not run_code).
func (s *scope) lookup(name string) *resolve.Definition {
	if d, ok := s.tools[name]; ok {
		return d
	}
	if s.parent == nil || !s.inherits(name) {
		return nil
	}
	return s.parent.lookup(name)
}

// visible returns every visible tool (not run_code), keyed by name.
func (s *scope) visible() map[string]*resolve.Definition {
	out := map[string]*resolve.Definition{}
	if s.parent != nil {
		for name, d := range s.parent.visible() {
			if s.inherits(name) {
				out[name] = d
			}
		}
	}
	for name, d := range s.tools {
		out[name] = d
	}
	return out
}

// registeredBelow reports whether name is registered on s or any descendant.
func (s *scope) registeredBelow(name string) *scope {
	if _, ok := s.tools[name]; ok {
		return s
	}
	for _, c := range s.children {
		if got := c.registeredBelow(name); got != nil {
			return got
		}
	}
	return nil
}

// registeredAbove reports the ancestor (or s) that registers name.
func (s *scope) registeredAbove(name string) *scope {
	for c := s; c != nil; c = c.parent {
		if _, ok := c.tools[name]; ok {
			return c
		}
	}
	return nil
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
