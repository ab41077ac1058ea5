package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ptcx/ptcx/internal/text"
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
// path, one longer than maxPathBytes or deeper than maxPathDepth, "..",
// absolute paths outside the root, and any symbolic link on the way (at any
// component, the last one included, dangling or not) that leads outside
// the root.
func (w *Workspace) resolve(ctx context.Context, p string) (target, error) {
	switch {
	case p == "":
		return target{}, failf(nil, "path is empty: give a path relative to the workspace root (\".\" is the root)")
	case len(p) > maxPathBytes:
		return target{}, failf(ErrLimit, "path %q is %s, more than the %d-byte path limit: give a shorter path", text.ShortenRunes(p, 80), size(int64(len(p))), maxPathBytes)
	case strings.IndexByte(p, 0) >= 0:
		return target{}, failf(nil, "path %q contains a NUL byte", p)
	}
	name, err := w.relative(p)
	if err != nil {
		return target{}, err
	}
	if n := depth(name); n > maxPathDepth {
		return target{}, failf(ErrLimit, "path %q has %d components, more than the %d-component path limit: give a shorter path", text.ShortenRunes(p, 80), n, maxPathDepth)
	}
	real, err := w.follow(ctx, name, p)
	if err != nil {
		return target{}, err
	}
	return target{name: name, real: real}, nil
}

// depth returns the number of components of a clean slash-separated
// relative path ("." has none).
func depth(name string) int {
	if name == "." || name == "" {
		return 0
	}
	return strings.Count(name, "/") + 1
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
// as the caller gave it, for messages. It holds a handle on each directory
// of the resolved prefix, so each component costs one or two system calls
// whatever the depth, and it checks ctx at every component.
func (w *Workspace) follow(ctx context.Context, name, orig string) (string, error) {
	r := &resolver{dirs: []*os.Root{w.fsys}}
	defer r.close()
	pending := pushPath(nil, name) // a stack: the next component is last
	hops, link := 0, ""
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		c := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(r.done) == 0 { // only a link's target can climb here: name is clean
				return "", failf(ErrEscapes, "path %q escapes the workspace: %q is a symbolic link that leads above the workspace root", orig, link)
			}
			r.up()
			continue
		}
		if len(r.done) == maxPathDepth {
			return "", failf(ErrLimit, "path %q resolves, through its symbolic links, to more than %d components, the path limit: give a path that does not pass through these links", text.ShortenRunes(orig, 80), maxPathDepth)
		}
		dir, err := r.dir()
		if err != nil {
			return "", describe(orig, err)
		}
		if dir == nil { // under a missing component or a file
			r.done = append(r.done, c)
			continue
		}
		at := path.Join(append(r.done, c)...)
		fi, err := dir.Lstat(c)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				r.done = append(r.done, c) // the operation reports it, if it matters
				continue
			}
			return "", describe(orig, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			r.down(c, fi.IsDir())
			continue
		}
		if hops++; hops > maxSymlinks {
			return "", loopError(orig)
		}
		link = at
		dest, err := dir.Readlink(c)
		if err != nil {
			return "", describe(orig, err)
		}
		if filepath.IsAbs(dest) {
			rel, ok := w.inside(filepath.Clean(dest))
			if !ok {
				return "", failf(ErrEscapes, "path %q escapes the workspace: %q is a symbolic link to a location outside the workspace", orig, at)
			}
			r.reset()
			dest = rel
		}
		pending = pushPath(pending, filepath.ToSlash(dest))
	}
	if len(r.done) == 0 {
		return ".", nil
	}
	return path.Join(r.done...), nil
}

// resolver is follow's position: the components resolved so far and open
// handles on the directories among them.
type resolver struct {
	done []string
	// found counts the leading components of done that are existing
	// directories; a later component does not exist or lies under a file.
	found int
	// dirs[i] is a handle on the directory done[:i]; dirs[0] is the root,
	// which the resolver does not close. Handles are opened when needed.
	dirs []*os.Root
}

// dir returns a handle on the directory done names, or nil when done does
// not name an existing directory.
func (r *resolver) dir() (*os.Root, error) {
	if r.found < len(r.done) {
		return nil, nil
	}
	for len(r.dirs) <= len(r.done) {
		i := len(r.dirs) - 1
		d, err := r.dirs[i].OpenRoot(r.done[i])
		if err != nil {
			return nil, err
		}
		r.dirs = append(r.dirs, d)
	}
	return r.dirs[len(r.done)], nil
}

// down appends an existing component c, a directory or not.
func (r *resolver) down(c string, isDir bool) {
	if isDir && r.found == len(r.done) {
		r.found++
	}
	r.done = append(r.done, c)
}

// up drops the last component.
func (r *resolver) up() {
	r.done = r.done[:len(r.done)-1]
	r.found = min(r.found, len(r.done))
	r.trim(r.found + 1)
}

// reset goes back to the root.
func (r *resolver) reset() {
	r.done, r.found = nil, 0
	r.trim(1)
}

// trim closes the handles past the first n.
func (r *resolver) trim(n int) {
	for len(r.dirs) > n {
		_ = r.dirs[len(r.dirs)-1].Close()
		r.dirs = r.dirs[:len(r.dirs)-1]
	}
}

func (r *resolver) close() { r.trim(1) }

// pushPath pushes the components of the slash-separated path p onto the
// stack pending, so that p's first component is popped first.
func pushPath(pending []string, p string) []string {
	parts := splitPath(p)
	for i := len(parts) - 1; i >= 0; i-- {
		pending = append(pending, parts[i])
	}
	return pending
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
	if err := w.checkLinks(t.name, fi); err != nil {
		f.Close()
		return nil, nil, err
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
