//go:build !linux

package wasmhost

// remapAnonymous is not available here: there are no reservations, so it
// is not called.
func remapAnonymous([]byte) bool { return false }

// adviseHuge is not available here: there are no reservations, so it is
// not called.
func adviseHuge([]byte) bool { return false }
