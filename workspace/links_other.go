//go:build !unix

package workspace

import "io/fs"

// linkInfo reports nothing: outside Unix, os.Stat does not give the link
// count, so hard-linked files and mount points are not refused there.
func linkInfo(fs.FileInfo) (dev, nlink uint64, ok bool) { return 0, 0, false }
