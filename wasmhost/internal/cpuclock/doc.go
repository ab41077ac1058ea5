// Package cpuclock reads the CPU time of one thread (Linux's thread CPU
// clocks): the calling thread's, or another thread's of this process by its
// id. Elsewhere it reads nothing and says so (Supported). wasmhost's compute
// meter charges a run the CPU time of the thread its guest executes on.
package cpuclock
