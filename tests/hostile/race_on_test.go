//go:build linux && race

package hostile_test

// raceCPU scales CPU bounds under the race detector, whose runtime costs
// several times the CPU of the code it watches (the Go documentation says
// 2–20x), its own garbage collection of a run's buffers included.
const raceCPU = 4
