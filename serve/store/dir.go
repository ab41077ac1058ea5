package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Dir is a Store in a local directory: one JSON file per record under
// records/, per lease under leases/, per session under sessions/ and per
// reservation under keys/, each written whole to a temporary
// file and renamed into place. It is the embedded default for one node
// that must keep its records across a restart; one process at a time
// may use a directory (the revision checks hold within that process).
type Dir struct {
	mu   sync.Mutex
	root string
	// unsynced: PutSnapshot does not sync (OpenDirUnsynced).
	unsynced bool
}

// name is what an id or a node name may be here (and in a NATS key).
var name = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

func checkName(what, s string) error {
	if !name.MatchString(s) || strings.Contains(s, "..") {
		return fmt.Errorf("store: %s %q must match %s without \"..\"", what, s, name)
	}
	return nil
}

// OpenDir opens (creating) a directory store at root.
func OpenDir(root string) (*Dir, error) {
	for _, sub := range []string{"records", "leases", "sessions", "keys"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o700); err != nil {
			return nil, fmt.Errorf("store dir %s: %w", root, err)
		}
	}
	return &Dir{root: root}, nil
}

// OpenDirUnsynced opens a directory store whose snapshots are not synced
// to the disk as they are written (PutSnapshot): for bytes that no later
// process reads, such as ptcx serve's spill directory (removed when it
// closes, its records in memory). A sync there only slows parking and
// removing: on a 2-core VM's ext4 disk under load, writing and renaming a
// 56 KiB snapshot took 2.4–3.9 ms on average synced, 0.1 ms not, and
// removing it 0.2 ms at the median (4–5.6 ms at p99) synced, 13 µs not.
// A crash may leave such a snapshot short: nothing reads it after one.
func OpenDirUnsynced(root string) (*Dir, error) {
	d, err := OpenDir(root)
	if err != nil {
		return nil, err
	}
	d.unsynced = true
	return d, nil
}

type dirEntry[T any] struct {
	Revision uint64 `json:"revision"`
	Value    T      `json:"value"`
}

func readEntry[T any](path string) (dirEntry[T], error) {
	var e dirEntry[T]
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("store: %s is not a record file: %w", path, err)
	}
	return e, nil
}

func writeEntry[T any](path string, e dirEntry[T]) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

func (d *Dir) recordPath(id string) string   { return filepath.Join(d.root, "records", id+".json") }
func (d *Dir) snapPath(name string) string   { return filepath.Join(d.root, "records", name+".park") }
func (d *Dir) leasePath(node string) string  { return filepath.Join(d.root, "leases", node+".json") }
func (d *Dir) sessionPath(key string) string { return filepath.Join(d.root, "sessions", key+".json") }

// Create implements Store.
func (d *Dir) Create(_ context.Context, r Record) (uint64, error) {
	if err := checkName("record id", r.ID); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := readEntry[Record](d.recordPath(r.ID))
	switch {
	case err == nil && live(old.Value, time.Now()):
		return 0, ErrExists
	case err != nil && !errors.Is(err, ErrNotFound):
		return 0, err
	}
	rev := old.Revision + 1
	return rev, writeEntry(d.recordPath(r.ID), dirEntry[Record]{rev, r})
}

// Get implements Store.
func (d *Dir) Get(_ context.Context, id string) (Record, error) {
	if checkName("record id", id) != nil {
		return Record{}, ErrNotFound
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e, err := readEntry[Record](d.recordPath(id))
	if err != nil {
		return Record{}, err
	}
	if !live(e.Value, time.Now()) {
		return Record{}, ErrNotFound
	}
	e.Value.Revision = e.Revision
	return e.Value, nil
}

// Update implements Store.
func (d *Dir) Update(_ context.Context, r Record) (uint64, error) {
	if err := checkName("record id", r.ID); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := readEntry[Record](d.recordPath(r.ID))
	if err != nil {
		return 0, err
	}
	if !live(old.Value, time.Now()) {
		return 0, ErrNotFound
	}
	if old.Revision != r.Revision {
		return 0, ErrConflict
	}
	rev := old.Revision + 1
	return rev, writeEntry(d.recordPath(r.ID), dirEntry[Record]{rev, r})
}

// Delete implements Store.
func (d *Dir) Delete(_ context.Context, id string) error {
	if checkName("record id", id) != nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.Remove(d.recordPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// List implements Store; it removes the files of expired records.
func (d *Dir) List(_ context.Context) ([]Record, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	paths, err := filepath.Glob(filepath.Join(d.root, "records", "*.json"))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []Record
	for _, p := range paths {
		e, err := readEntry[Record](p)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !live(e.Value, now) {
			_ = os.Remove(p)
			continue
		}
		e.Value.Revision = e.Revision
		out = append(out, e.Value)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RenewLease implements Store.
func (d *Dir) RenewLease(_ context.Context, node string, until time.Time) error {
	if err := checkName("node", node); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := readEntry[Lease](d.leasePath(node))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return writeEntry(d.leasePath(node), dirEntry[Lease]{old.Revision + 1, Lease{Node: node, Until: until}})
}

// Leases implements Store.
func (d *Dir) Leases(_ context.Context) ([]Lease, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	paths, err := filepath.Glob(filepath.Join(d.root, "leases", "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Lease
	for _, p := range paths {
		e, err := readEntry[Lease](p)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		e.Value.Revision = e.Revision
		out = append(out, e.Value)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, nil
}

// DropLease implements Store.
func (d *Dir) DropLease(_ context.Context, l Lease) error {
	if err := checkName("node", l.Node); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, err := readEntry[Lease](d.leasePath(l.Node))
	if errors.Is(err, ErrNotFound) || (err == nil && cur.Revision != l.Revision) {
		return ErrConflict
	}
	if err != nil {
		return err
	}
	return os.Remove(d.leasePath(l.Node))
}

// Check implements Store: the directory must be writable.
func (d *Dir) Check(context.Context) error {
	f, err := os.CreateTemp(d.root, ".check-*")
	if err != nil {
		return fmt.Errorf("%w: directory %s is not writable: %w", ErrUnavailable, d.root, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Close implements Store.
func (d *Dir) Close() error { return nil }

// PutSnapshot implements Store: the file records/NAME.park, beside the
// records, written to a temporary file, synced (unless OpenDirUnsynced)
// and renamed into place.
func (d *Dir) PutSnapshot(_ context.Context, name string, data []byte) error {
	if err := checkName("snapshot", name); err != nil {
		return err
	}
	if err := checkSnapshot(name, int64(len(data))); err != nil {
		return err
	}
	path := d.snapPath(name)
	f, err := os.CreateTemp(filepath.Dir(path), name+".*.tmp")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer func() { _ = os.Remove(f.Name()) }() // a no-op once renamed
	_, err = f.Write(data)
	if err == nil && !d.unsynced {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("%w: writing snapshot %s: %w", ErrUnavailable, name, err)
	}
	return nil
}

// GetSnapshot implements Store.
func (d *Dir) GetSnapshot(_ context.Context, name string) ([]byte, error) {
	if checkName("snapshot", name) != nil {
		return nil, ErrNotFound
	}
	f, err := os.Open(d.snapPath(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := checkSnapshot(name, fi.Size()); err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%w: reading snapshot %s: %w", ErrUnavailable, name, err)
	}
	return b, nil
}

// DeleteSnapshot implements Store.
func (d *Dir) DeleteSnapshot(_ context.Context, name string) error {
	if checkName("snapshot", name) != nil {
		return nil
	}
	if err := os.Remove(d.snapPath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// CreateSession implements Store: one file per session under sessions/.
func (d *Dir) CreateSession(_ context.Context, r SessionRecord) (uint64, error) {
	if err := checkName("session key", r.Key); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := readEntry[SessionRecord](d.sessionPath(r.Key))
	switch {
	case err == nil && liveSession(old.Value, time.Now()):
		return 0, ErrExists
	case err != nil && !errors.Is(err, ErrNotFound):
		return 0, err
	}
	rev := old.Revision + 1
	return rev, writeEntry(d.sessionPath(r.Key), dirEntry[SessionRecord]{rev, r})
}

// GetSession implements Store.
func (d *Dir) GetSession(_ context.Context, key string) (SessionRecord, error) {
	if checkName("session key", key) != nil {
		return SessionRecord{}, ErrNotFound
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e, err := readEntry[SessionRecord](d.sessionPath(key))
	if err != nil {
		return SessionRecord{}, err
	}
	if !liveSession(e.Value, time.Now()) {
		return SessionRecord{}, ErrNotFound
	}
	e.Value.Revision = e.Revision
	return e.Value, nil
}

// UpdateSession implements Store.
func (d *Dir) UpdateSession(_ context.Context, r SessionRecord) (uint64, error) {
	if err := checkName("session key", r.Key); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := readEntry[SessionRecord](d.sessionPath(r.Key))
	if err != nil {
		return 0, err
	}
	if !liveSession(old.Value, time.Now()) {
		return 0, ErrNotFound
	}
	if old.Revision != r.Revision {
		return 0, ErrConflict
	}
	rev := old.Revision + 1
	return rev, writeEntry(d.sessionPath(r.Key), dirEntry[SessionRecord]{rev, r})
}

// DeleteSession implements Store.
func (d *Dir) DeleteSession(_ context.Context, key string) error {
	if checkName("session key", key) != nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.Remove(d.sessionPath(key)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// CountSessions implements Store: the files under sessions/ whose key
// starts with prefix, read to count only the live ones.
func (d *Dir) CountSessions(_ context.Context, prefix string) (int, error) {
	if err := checkSessionPrefix(prefix); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	files, err := filepath.Glob(filepath.Join(d.root, "sessions", prefix+"*.json"))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	now, n := time.Now(), 0
	for _, f := range files {
		e, err := readEntry[SessionRecord](f)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if liveSession(e.Value, now) {
			n++
		}
	}
	return n, nil
}
