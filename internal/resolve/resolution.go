package resolve

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

// Resolution is the outcome of a Resolver.
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

// Resolver resolves a call on one Registry: scope, the tool's name, and
// whether the call is nested (it carries a live parent token of a run_code
// execution; the executor decides that). It is safe for concurrent use.
type Resolver func(scope, name string, nested bool) Resolution

// Changes counts one Registry's changes that can alter a resolution
// (a scope, a mode, a restriction, a tool): a Resolution obtained after
// reading n is still the answer while Changes returns n. It is safe for
// concurrent use, and reads no lock.
type Changes func() uint64

// open and openChanges are the registry's: see Install.
var (
	open        func(reg any) Resolver
	openChanges func(reg any) Changes
)

// Install is called once, by package registry as it initialises, with the
// functions that give a *registry.Registry's Resolver and Changes. reg is
// typed any because resolve cannot import registry (registry imports
// resolve).
func Install(f func(reg any) Resolver, c func(reg any) Changes) { open, openChanges = f, c }

// Open returns reg's Resolver; reg must be a *registry.Registry.
func Open(reg any) Resolver { return open(reg) }

// OpenChanges returns reg's Changes; reg must be a *registry.Registry.
func OpenChanges(reg any) Changes { return openChanges(reg) }
