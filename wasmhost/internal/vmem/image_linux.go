//go:build linux

package vmem

import "golang.org/x/sys/unix"

// SealedFile returns a memfd holding data, sealed so that nothing can
// change it (no write, no resize, no further seal), or -1 when memfds are
// not available (the image is then copied into every instance).
func SealedFile(data []byte) int {
	fd, err := unix.MemfdCreate("ptcx-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1
	}
	for off := 0; off < len(data); {
		n, err := unix.Write(fd, data[off:])
		if err != nil || n <= 0 {
			_ = unix.Close(fd)
			return -1
		}
		off += n
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS,
		unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		_ = unix.Close(fd)
		return -1
	}
	return fd
}

func CloseFile(fd int) { _ = unix.Close(fd) }
