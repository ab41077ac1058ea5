package workspace

import (
	"io/fs"
	"sync"
	"time"
)

// stamp is what the Workspace saw of a file: enough to tell whether it
// changed since.
type stamp struct {
	size  int64
	mtime time.Time
}

func stampOf(fi fs.FileInfo) stamp { return stamp{size: fi.Size(), mtime: fi.ModTime()} }

// observer is the read-before-write state (the fs-observation rule): the
// files a Workspace has read or written, keyed by resolved path. It is safe
// for concurrent use.
type observer struct {
	mu    sync.Mutex
	files map[string]stamp
}

// record notes that the file at real was read or written, as fi describes
// it. A read records the file's state from before it read the content, so
// a change made during the read is caught by the next check.
func (o *observer) record(real string, fi fs.FileInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.files[real] = stampOf(fi)
}

// check allows a write or edit of the existing file at real (named name for
// the model), described by fi: it must have been read, and be unchanged
// (same size and modification time) since.
func (o *observer) check(name, real string, fi fs.FileInfo) error {
	o.mu.Lock()
	seen, ok := o.files[real]
	o.mu.Unlock()
	switch {
	case !ok:
		return failf(ErrNotRead, "file %q exists and has not been read in this session: read it first, then edit or write it", name)
	case seen.size != fi.Size() || !seen.mtime.Equal(fi.ModTime()):
		return failf(ErrChanged, "file %q changed on disk since it was last read (its size or modification time differ): read it again, then edit or write it", name)
	}
	return nil
}
