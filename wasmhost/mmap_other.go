//go:build !linux

package wasmhost

// reserve is not available here: linear memory lives in the Go heap and
// is copied when it grows.
func reserve(n, populate uint64) ([]byte, bool) { return nil, false }

func release([]byte) {}

// populate does nothing: there are no reservations here.
func populate([]byte) {}

// discard zeroes b: there are no reservations here, so it is not called.
func discard(b []byte) { clear(b) }

// revert is not available here: there are no mappings of files.
func revert([]byte) bool { return false }

// mapFile is not available here: a restored memory copies the image.
func mapFile([]byte, int, int) bool { return false }

// privatePages is not available here: memories are not mappings of the
// image.
func privatePages(_ []byte, buf []byte, _ func(off, end int)) ([]byte, bool) { return buf, false }

// filledPages is not needed here: no memory maps the image.
func filledPages([]byte) []uint32 { return nil }

// mapsImage is always false here: no memory maps the image.
func mapsImage([]byte, []uint32) bool { return false }
