// Package wasifs is a read-only WASI preview1 file system over an fs.FS
// mounted at one preopened directory (fd 3), whose open files are a table
// the host owns, one per instance (Table): the host can read it (Files),
// empty it (Reset) and fill it again (Restore), which an engine's own WASI
// state does not allow. The WASI functions (Funcs) take the table, the
// calling instance's memory and their parameters as a stack of raw
// values, as engine.HostFunc's do; an engine defines them in place of its
// own file functions. It owns the file functions only: the clocks, the
// random source, the environment, polling and sockets stay the engine's.
//
// It imports only the standard library.
package wasifs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// The descriptors: the standard streams (0 standard input, always at its
// end; 1 and 2 standard output and error, which discard what is written),
// the preopened directory, then the files a guest opens, the lowest free
// one first (as POSIX's open).
const (
	Preopen   = 3
	firstFile = Preopen + 1
	// MaxOpen is how many files and directories an instance may have open
	// at once besides the standard streams and the preopen; path_open
	// beyond it fails with EMFILE. CPython opens one at a time (the
	// standard library's zip, for an import), a program a few; 64 bounds
	// what a run holds and what a snapshot carries.
	MaxOpen = 64
	// maxPath bounds a path a guest passes (ENAMETOOLONG beyond).
	maxPath = 4096
)

// A Table is one instance's file system: the fs it sees and the files it
// has open. It is used by one goroutine at a time (its instance's).
type Table struct {
	fsys  fs.FS
	mount string         // the preopen's name, as fd_prestat_dir_name gives it
	root  file           // the preopen
	open  [MaxOpen]*file // fd firstFile+i; nil when free
}

// file is one open file or directory.
type file struct {
	path   string // in fsys: "." for the root, else clean and unrooted
	dir    bool
	offset int64 // a file's read position
	size   int64
	flags  uint16 // fdflags (fd_fdstat_set_flags): nonblock only
	f      fs.File
	list   []dirent // a directory's listing, made at its first fd_readdir
}

// File is one open file of a Table, as a snapshot carries it.
type File struct {
	FD     uint32 `json:"fd"`
	Path   string `json:"path"`             // in the fs: "." for the root
	Offset int64  `json:"offset,omitempty"` // a file's read position
	Dir    bool   `json:"dir,omitempty"`
	Flags  uint16 `json:"flags,omitempty"` // fdflags
}

// New returns the table of a new instance that sees fsys, read-only, as
// the directory mount (an absolute path: "/usr/local/lib"), with no file
// open.
func New(fsys fs.FS, mount string) *Table {
	return &Table{fsys: fsys, mount: mount, root: file{path: ".", dir: true}}
}

// Reset closes every file the guest opened: the table is a new one's.
func (t *Table) Reset() {
	for i, f := range t.open {
		if f != nil {
			f.close()
			t.open[i] = nil
		}
	}
}

// Files returns the open files, by descriptor.
func (t *Table) Files() []File {
	var out []File
	for i, f := range t.open {
		if f != nil {
			out = append(out, File{FD: uint32(firstFile + i), Path: f.path, Offset: f.offset, Dir: f.dir, Flags: f.flags})
		}
	}
	return out
}

// Restore resets the table and opens files, as Files gave them; it fails,
// naming the entry, when one's descriptor is not a guest file's or is
// given twice, its path is not clean or does not exist in the fs or is of
// the other kind, its offset is outside the file, or its flags are not
// fd_fdstat_set_flags's; the table is then empty.
func (t *Table) Restore(files []File) error {
	t.Reset()
	for i, e := range files {
		if err := t.restore(e); err != nil {
			t.Reset()
			return fmt.Errorf("wasifs: open file %d (fd %d, %q): %w", i, e.FD, e.Path, err)
		}
	}
	return nil
}

func (t *Table) restore(e File) error {
	switch {
	case e.FD < firstFile || e.FD >= firstFile+MaxOpen:
		return fmt.Errorf("the descriptor is not a guest file's (%d to %d)", firstFile, firstFile+MaxOpen-1)
	case t.open[e.FD-firstFile] != nil:
		return errors.New("the descriptor is open already")
	case e.Path != "." && !fs.ValidPath(e.Path):
		return errors.New("the path is not a clean path of the file system")
	case e.Flags&^fdflagNonblock != 0:
		return fmt.Errorf("flags %#x are not a read-only file's", e.Flags)
	case e.Dir && e.Offset != 0:
		return errors.New("a directory has no offset")
	}
	f, errno := t.openPath(e.Path)
	if errno != errnoSuccess {
		return fmt.Errorf("the file cannot be opened (WASI errno %d)", errno)
	}
	if f.dir != e.Dir {
		f.close()
		return fmt.Errorf("the file is a directory: %v, the entry says %v", f.dir, e.Dir)
	}
	if e.Offset < 0 || e.Offset > f.size {
		f.close()
		return fmt.Errorf("offset %d is outside the file (%d bytes)", e.Offset, f.size)
	}
	f.offset, f.flags = e.Offset, e.Flags
	t.open[e.FD-firstFile] = f
	return nil
}

// openPath opens the path p of the fs (clean, unrooted).
func (t *Table) openPath(p string) (*file, uint32) {
	info, err := fs.Stat(t.fsys, p)
	if err != nil {
		return nil, errnoOf(err)
	}
	f := &file{path: p, dir: info.IsDir()}
	if f.dir {
		return f, errnoSuccess
	}
	if f.f, err = t.fsys.Open(p); err != nil {
		return nil, errnoOf(err)
	}
	f.size = info.Size()
	return f, errnoSuccess
}

// add puts f at the lowest free descriptor and returns it; EMFILE when
// MaxOpen are open.
func (t *Table) add(f *file) (uint32, uint32) {
	for i, o := range t.open {
		if o == nil {
			t.open[i] = f
			return uint32(firstFile + i), errnoSuccess
		}
	}
	f.close()
	return 0, errnoMfile
}

// get returns the open file or directory fd: the preopen (the root) or one
// the guest opened; nil for any other.
func (t *Table) get(fd uint32) *file {
	if fd == Preopen {
		return &t.root
	}
	if fd >= firstFile && fd < firstFile+MaxOpen {
		return t.open[fd-firstFile]
	}
	return nil
}

func (f *file) close() {
	if f.f != nil {
		_ = f.f.Close()
	}
}

// readAt reads the file at off into b, as io.ReaderAt does, through the
// file's ReadAt or, without it, its Seek and Read (an fs.File with neither
// cannot be read: EIO).
func (f *file) readAt(b []byte, off int64) (int, uint32) {
	var n int
	var err error
	switch r := f.f.(type) {
	case io.ReaderAt:
		n, err = r.ReadAt(b, off)
	case io.ReadSeeker:
		if _, err = r.Seek(off, io.SeekStart); err == nil {
			n, err = io.ReadFull(r, b)
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
		}
	default:
		return 0, errnoIo
	}
	if err != nil && err != io.EOF {
		return n, errnoIo
	}
	return n, errnoSuccess
}

// resolve returns the path in the fs of rel, a guest's path relative to
// the directory dir: WASI paths are relative (a rooted one is
// ENOTCAPABLE); "." and ".." are resolved lexically, the fs having no
// links, and a ".." above the root is ENOTCAPABLE; an empty path is
// ENOENT, a NUL EINVAL. mustDir is set when rel ends with a slash.
func resolve(dir, rel string) (p string, mustDir bool, errno uint32) {
	switch {
	case rel == "":
		return "", false, errnoNoent
	case len(rel) > maxPath:
		return "", false, errnoNametoolong
	case rel[0] == '/':
		return "", false, errnoNotcapable
	case strings.IndexByte(rel, 0) >= 0:
		return "", false, errnoInval
	}
	var parts []string
	if dir != "." {
		parts = strings.Split(dir, "/")
	}
	for _, c := range strings.Split(rel, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(parts) == 0 {
				return "", false, errnoNotcapable
			}
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, c)
		}
	}
	if len(parts) == 0 {
		return ".", strings.HasSuffix(rel, "/"), errnoSuccess
	}
	return strings.Join(parts, "/"), strings.HasSuffix(rel, "/"), errnoSuccess
}

// errnoOf maps an fs error to an errno.
func errnoOf(err error) uint32 {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errnoNoent
	case errors.Is(err, fs.ErrInvalid):
		return errnoInval
	case errors.Is(err, fs.ErrPermission):
		return errnoNotcapable
	}
	return errnoIo
}
