//go:build linux && !race

package hostile_test

// raceCPU scales CPU bounds under the race detector; without it, 1.
const raceCPU = 1
