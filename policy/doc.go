// Package policy owns what a tool declares about the data that flows
// through it and what it may be asked to do (docs/security.md, "Data
// flow"): the labels of its results, the labels it accepts on a call and on
// each argument, what happens past them (deny or ask), constraints as CEL
// expressions over the arguments, calls per run and cost. A Declaration is
// the public, JSON-tagged form (registry.Tool.Policy, the tools file's
// members); Compile checks it once, at registration, into a Compiled the
// executor consults for every nested call. The executor keeps the labels of
// a running program and enforces; this package only decides.
//
// It imports api and cel.dev/cel-go.
package policy
