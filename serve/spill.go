package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ptcx/ptcx/serve/store"
)

// The embedded default's spill: without a store shared beyond this process
// (no store, or "memory"), a parked execution's bytes are written to a
// local directory and its Parked is given up, so that thousands of
// executions waiting on their clients hold neither instances nor their
// snapshots in memory. The directory is this process's own: created at
// start, removed at Close (the records are in memory, so nothing in it
// outlives the process anyway; a store "dir:" is the one that survives a
// restart).

// spill is the directory parked executions' bytes go to.
type spill struct {
	root string
	dir  *store.Dir
}

// defaultSpillParent is where the spill directory is made when spill_dir
// is not set: the user's cache directory (on disk; /tmp is often memory).
func defaultSpillParent() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no spill_dir and no user cache directory (%w): set spill_dir", err)
	}
	return filepath.Join(d, "ptcx", "spill"), nil
}

// openSpill makes a new spill directory under parent (created 0700).
func openSpill(parent string) (*spill, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("field spill_dir: %w", err)
	}
	root, err := os.MkdirTemp(parent, "serve-")
	if err != nil {
		return nil, fmt.Errorf("field spill_dir: %w", err)
	}
	d, err := store.OpenDir(root)
	if err != nil {
		_ = os.RemoveAll(root)
		return nil, fmt.Errorf("field spill_dir: %w", err)
	}
	return &spill{root: root, dir: d}, nil
}

func (sp *spill) put(name string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := sp.dir.PutSnapshot(ctx, name, data); err != nil {
		return fmt.Errorf("spilling its snapshot to %s: %w", sp.root, err)
	}
	return nil
}

// get reads name's bytes. They stay until remove: a spilled execution's
// file goes once its program ran past it, not when it is read (a resume
// that cannot start keeps it parked, its file with it).
func (sp *spill) get(ctx context.Context, name string) ([]byte, error) {
	data, err := sp.dir.GetSnapshot(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading its spilled snapshot %s from %s: %w", name, sp.root, err)
	}
	return data, nil
}

// remove deletes name's bytes (none is not an error).
func (sp *spill) remove(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := sp.dir.DeleteSnapshot(ctx, name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("removing its spilled snapshot %s: %w", name, err)
	}
	return nil
}

func (sp *spill) close() error { return os.RemoveAll(sp.root) }
