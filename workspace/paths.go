package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds the links followed while resolving one path, as the
// kernel does (Linux: 40).
const maxSymlinks = 40

// target is a path argument, resolved.
type target struct {
	// name is the path as the caller named it, cleaned, slash-separated and
	// relative to the root ("." is the root): what results and messages show.
	name string
	// real is the same location with every symbolic link resolved: what
	// operations open and what the read-before-write state is keyed by. The
	// location need not exist.
	real string
}

// resolve confines a path argument to the workspace. It refuses an empty
// path, "..", absolute paths outside the root, and any symbolic link on the
// way (at any component, the last one included, dangling or not) that leads
// outside the root.
func (w *Workspace) resolve(p string) (target, error) {
	if p == "" {
		return target{}, failf(nil, "path is empty: give a path relative to the workspace root (\".\" is the root)")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return target{}, failf(nil, "path %q contains a NUL byte", p)
	}
	name, err := w.relative(p)
	if err != nil {
		return target{}, err
	}
	real, err := w.follow(name, p)
	if err != nil {
		return target{}, err
	}
	return target{name: name, real: real}, nil
}

// relative cleans p and makes it relative to the root, refusing lexical
// escapes.
func (w *Workspace) relative(p string) (string, error) {
	c := filepath.Clean(filepath.FromSlash(p))
	if filepath.IsAbs(c) {
		rel, ok := w.inside(c)
		if !ok {
			return "", failf(ErrEscapes, "path %q escapes the workspace: an absolute path must lie inside the workspace root; use a path relative to the root instead", p)
		}
		return rel, nil
	}
	if c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return "", failf(ErrEscapes, "path %q escapes the workspace: \"..\" may not lead above the workspace root", p)
	}
	return filepath.ToSlash(c), nil
}

// inside reports whether the clean absolute path abs lies in the root (as
// resolved, or as given to New) and returns it relative to the root.
func (w *Workspace) inside(abs string) (string, bool) {
	for _, base := range []string{w.root, w.alias} {
		rel, err := filepath.Rel(base, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// follow resolves every symbolic link in name (relative to the root),
// component by component, and returns the resulting path relative to the
// root. Components that do not exist are kept as they are. orig is the path
// as the caller gave it, for messages.
func (w *Workspace) follow(name, orig string) (string, error) {
	pending := splitPath(name)
	var done []string // resolved components: real directories, no links
	hops, link := 0, ""
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 { // only a link's target can climb here: name is clean
				return "", failf(ErrEscapes, "path %q escapes the workspace: %q is a symbolic link that leads above the workspace root", orig, link)
			}
			done = done[:len(done)-1]
			continue
		}
		at := path.Join(append(done, c)...)
		fi, err := w.fsys.Lstat(at)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				done = append(done, c) // the operation reports it, if it matters
				continue
			}
			return "", describe(orig, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if hops++; hops > maxSymlinks {
			return "", loopError(orig)
		}
		link = at
		dest, err := w.fsys.Readlink(at)
		if err != nil {
			return "", describe(orig, err)
		}
		if filepath.IsAbs(dest) {
			rel, ok := w.inside(filepath.Clean(dest))
			if !ok {
				return "", failf(ErrEscapes, "path %q escapes the workspace: %q is a symbolic link to a location outside the workspace", orig, at)
			}
			done = nil
			dest = rel
		}
		pending = append(splitPath(filepath.ToSlash(dest)), pending...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return path.Join(done...), nil
}

func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// openFile opens the resolved target for flag and refuses anything but a
// regular file. O_NONBLOCK keeps a FIFO from blocking the open.
func (w *Workspace) openFile(t target, flag int) (*os.File, fs.FileInfo, error) {
	f, err := w.fsys.OpenFile(t.real, flag|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, describe(t.name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, describe(t.name, err)
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, nil, failf(nil, "%q is a directory, not a file: use list to see its entries", t.name)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, failf(nil, "%q is not a regular file (it is a device, socket or pipe)", t.name)
	}
	return f, fi, nil
}

// display returns the workspace-relative path of real, an entry found
// under the resolved directory base whose caller-facing name is baseName.
func display(baseName, base, real string) string {
	if base == "." {
		return path.Join(baseName, real)
	}
	return path.Join(baseName, strings.TrimPrefix(real, base+"/"))
}
