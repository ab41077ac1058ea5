//go:build !linux

package vmem

// reserve is not available here: linear memory lives in the Go heap and
// is copied when it grows.
func Reserve(n, populate uint64) ([]byte, bool) { return nil, false }

func Release([]byte) {}

// populate does nothing: there are no reservations here.
func Populate([]byte) {}

// discard zeroes b: there are no reservations here, so it is not called.
func Discard(b []byte) { clear(b) }

// revert is not available here: there are no mappings of files.
func Revert([]byte) bool { return false }

// MapFile is not available here: a restored memory copies the image.
func MapFile([]byte, int, int) bool { return false }

// PrivatePages is not available here: memories are not mappings of the
// image.
func PrivatePages(_ []byte, buf []byte, _ func(off, end int)) ([]byte, bool) { return buf, false }

// FilledPages is not needed here: no memory maps the image.
func FilledPages([]byte) []uint32 { return nil }

// MapsImage is always false here: no memory maps the image.
func MapsImage([]byte, []uint32) bool { return false }
