package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// Sentinels for errors.Is on the errors tool bodies return. The error's text
// is the message for the model; the sentinel says which kind it is. A
// missing file also matches fs.ErrNotExist.
var (
	// ErrEscapes: a path leaves the workspace ("..", an absolute path
	// outside the root, or a symbolic link pointing outside).
	ErrEscapes = errors.New("path escapes the workspace")
	// ErrSymlinkLoop: resolving a path met too many symbolic links.
	ErrSymlinkLoop = errors.New("too many symbolic links")
	// ErrNotRead: write or edit of an existing file this Workspace has not
	// read.
	ErrNotRead = errors.New("file has not been read")
	// ErrChanged: write or edit of a file that changed on disk since it was
	// read.
	ErrChanged = errors.New("file changed since it was read")
	// ErrBinary: the file is not text (NUL bytes or invalid UTF-8).
	ErrBinary = errors.New("file is binary")
	// ErrTooLarge: the file, or the requested lines, exceed a size limit.
	ErrTooLarge = errors.New("file too large")
	// ErrNoMatch: edit's old_string does not occur in the file.
	ErrNoMatch = errors.New("old_string not found")
	// ErrAmbiguous: edit's old_string occurs more than once and replace_all
	// is not set.
	ErrAmbiguous = errors.New("old_string is ambiguous")
	// ErrLimit: an argument (a path, a pattern) or the work it asks for
	// exceeds one of the bounds stated in the package documentation.
	ErrLimit = errors.New("limit exceeded")
	// ErrHardLink: a regular file has more than one hard link, so it may
	// also be a file outside the workspace.
	ErrHardLink = errors.New("file has several hard links")
	// ErrMount: a file lies on another file system than the root (a mount
	// point inside the workspace), so it may come from outside.
	ErrMount = errors.New("file is on another file system")
)

// failure is a tool error: a message for the model and a kind for
// errors.Is. It never wraps an OS error, whose text could name host paths.
type failure struct {
	kind error
	msg  string
}

func (e *failure) Error() string { return e.msg }
func (e *failure) Unwrap() error { return e.kind }

// failf returns a failure of the given kind (nil: no kind).
func failf(kind error, format string, args ...any) error {
	return &failure{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// describe turns an error from a file operation on name (as the model gave
// it) into a message for the model. Only the OS error code crosses, never
// the path an *fs.PathError carries.
func describe(name string, err error) error {
	var pe *fs.PathError
	cause := err
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	switch {
	case errors.Is(cause, fs.ErrNotExist):
		return failf(fs.ErrNotExist, "%q does not exist in the workspace: use list or glob to find files", name)
	case errors.Is(cause, fs.ErrPermission):
		return failf(fs.ErrPermission, "permission denied for %q", name)
	case errors.Is(cause, syscall.ENOTDIR):
		return failf(fs.ErrNotExist, "%q cannot exist: a component of the path is a file, not a directory", name)
	case errors.Is(cause, syscall.EISDIR):
		return failf(nil, "%q is a directory, not a file: use list to see its entries", name)
	case errors.Is(cause, syscall.ELOOP):
		return loopError(name)
	case cause.Error() == "path escapes from parent":
		// os.Root refused an escape that appeared after our own check (the
		// tree changed in between). os does not export this error.
		return failf(ErrEscapes, "path %q escapes the workspace: it leads outside the workspace root", name)
	case errors.Is(cause, fs.ErrClosed):
		return failf(fs.ErrClosed, "the workspace is closed")
	}
	var errno syscall.Errno
	if errors.As(cause, &errno) {
		return failf(nil, "cannot access %q: %s", name, errno.Error())
	}
	return failf(nil, "cannot access %q: an I/O error occurred", name)
}

func loopError(name string) error {
	return failf(ErrSymlinkLoop, "path %q cannot be resolved: it passes through too many symbolic links (is there a loop?)", name)
}
