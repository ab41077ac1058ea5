//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// linkInfo returns the device and the hard-link count of the file fi
// describes.
func linkInfo(fi fs.FileInfo) (dev, nlink uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Nlink), true // the field types differ between systems
}
