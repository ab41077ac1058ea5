// Package hostile (its tests run on Linux only: the containment they check
// is Linux's) is a corpus of hostile programs, tool calls and scripts
// run against a real executor (the built-in workspace tools, command tools
// and the wasm sandbox) as an attacker would, one case per child process, so
// that a case that crashes the host or exhausts its memory fails its test
// instead of killing the test binary. Each case records its outcome, the
// time it took and the child's peak RSS, and the next normal run in the same
// process must return the normal result. See harness_test.go; the soak test
// (soak_test.go, scripts/soak.sh) runs good and hostile programs together
// through one executor.
//
// The package has no API: everything is in its tests.
package hostile
