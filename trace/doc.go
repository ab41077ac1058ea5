// Package trace records run_code executions as JSON lines, one Record per
// execution, and replays them: a Recorder built on the executor's
// notification hooks, a Writer and a Reader of the JSON-lines form, and
// Replay, which re-runs a recorded program with every nested call answered
// from its trace and reports the first divergence. docs/trace.md is the
// schema.
//
// It imports api, executor, registry and wasmhost.
package trace
