//go:build unix && !linux

package workspace_test

import (
	"runtime"
	"syscall"
)

// maxRSSBytes returns a process's peak resident set: macOS reports it in
// bytes, the BSDs in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
