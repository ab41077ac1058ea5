// Package executor is the pipeline every tool call goes through, model-direct
// or nested: create → (cancelled?) → validate → pre-execute → approval →
// guards → dispatch → post-execute → finish, one file per phase. It enforces
// the collapse (DESIGN.md section 3) in the first phase, owns the run_code
// transport and the scheduler of the nested calls a program makes, and mints
// the parent tokens that tell nested calls from model-direct ones.
//
// It imports registry (definitions, the resolver, errors), wasmhost (the
// sandbox), transpile (TypeScript stripping) and sdkgen (route hints).
// An Executor is safe for concurrent use.
package executor
