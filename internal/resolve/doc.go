// Package resolve is the execution surface of the registry: compiled tool
// Definitions (their bodies, finalizers and schema validators), argument
// parsing, and the resolver that decides what a call may run (Open). It is
// internal so that only ptcx's own packages reach a tool body; of those,
// only the executor does, so every execution goes through its pipeline
// (collapse, validation, policy, notifications).
//
// The registry owns the data and installs the resolver (Install) when it
// initialises; the executor opens it for one Registry. resolve imports api,
// the standard library and a JSON-Schema library; never registry.
package resolve
