//go:build wasmtime

package wasmhost

// #include <stdint.h>
import "C"

import "runtime/cgo"

// ptcxEpoch is called by the store's epoch deadline callback
// (engine_wasmtime_epoch.go; a file of its own, since cgo allows only
// declarations in the preamble of a file that exports to C): 1 when the
// host stopped the guest.
//
//export ptcxEpoch
func ptcxEpoch(state C.uintptr_t) C.int {
	if epochPoll(cgo.Handle(state).Value().(*wasmtimeState)) {
		return 1
	}
	return 0
}
