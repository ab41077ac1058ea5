// Package executor is the pipeline every tool call goes through, model-direct
// or nested, one file per phase; docs/architecture.md ("One execution")
// lists the phases and what each decides. It enforces the collapse
// (docs/architecture.md, "The collapse") in the first phase, owns the
// run_code transport and the scheduler of the nested calls a program makes,
// and mints the parent tokens that tell nested calls from model-direct ones.
//
// It imports registry (definitions, the resolver, errors), wasmhost (the
// sandbox), transpile (TypeScript stripping), sdkgen (route hints) and
// internal/text.
// An Executor is safe for concurrent use.
package executor
