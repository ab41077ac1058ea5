package proc

import (
	"syscall"
	"unsafe"
)

// waitExit blocks until the process pid has exited, without reaping it
// (waitid with WNOWAIT), so that its pid, and its process group's, stay
// reserved while the rest of its tree is killed. It reports true.
func waitExit(pid int) bool {
	const (
		pPID    = 1         // P_PID
		wNoWait = 0x1000000 // WNOWAIT
	)
	var info [128]byte // siginfo_t, not read
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info)), syscall.WEXITED|wNoWait, 0, 0)
		if errno != syscall.EINTR {
			return true
		}
	}
}
