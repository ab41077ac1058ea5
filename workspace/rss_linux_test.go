package workspace_test

import "syscall"

// maxRSSBytes returns a process's peak resident set: Linux reports it in
// KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss << 10 }
