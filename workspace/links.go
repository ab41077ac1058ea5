package workspace

import "io/fs"

// checkLinks refuses a regular file that may lie outside the workspace
// although its path is inside: one with more than one hard link (a link
// made inside the root to a file outside looks like any other file), or
// one on another file system than the root (a mount point in the tree).
// fi must describe the open file. Where the system does not report link
// counts and devices (see linkInfo), files are not checked.
func (w *Workspace) checkLinks(name string, fi fs.FileInfo) error {
	dev, nlink, ok := linkInfo(fi)
	switch {
	case !ok || !fi.Mode().IsRegular():
		return nil
	case nlink > 1:
		return failf(ErrHardLink, "file %q has %d hard links; ptcx refuses hard-linked files because a link can point outside the workspace: replace it with a copy of its own to work on it", name, nlink)
	case w.dev != nil && dev != *w.dev:
		return failf(ErrMount, "file %q is on another file system than the workspace root; ptcx refuses such files because a mount can bring files from outside into the workspace", name)
	}
	return nil
}
