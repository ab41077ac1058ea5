// Package spill is ptcx serve's spill directory: without a store shared
// beyond the process (no store, or "memory"), a parked execution's bytes
// are written to a local directory and its program is given up, so that
// thousands of executions waiting on their clients hold neither instances
// nor their snapshots in memory. The directory is the process's own:
// created at start, removed at Close (the records are in memory, so
// nothing in it outlives the process anyway; a store "dir:" is the one
// that survives a restart). It imports serve/store, whose directory store
// keeps the files.
package spill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ptcx/ptcx/serve/store"
)

// Spill is the directory parked executions' bytes go to. It is safe for
// concurrent use.
type Spill struct {
	root    string
	dir     *store.Dir
	timeout time.Duration
}

// DefaultParent is where the spill directory is made when spill_dir is
// not set: the user's cache directory (on disk; /tmp is often memory).
func DefaultParent() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no spill_dir and no user cache directory (%w): set spill_dir", err)
	}
	return filepath.Join(d, "ptcx", "spill"), nil
}

// Open makes a new spill directory under parent (created 0700); timeout
// bounds each write and removal. Its errors name the field spill_dir.
func Open(parent string, timeout time.Duration) (*Spill, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("field spill_dir: %w", err)
	}
	root, err := os.MkdirTemp(parent, "serve-")
	if err != nil {
		return nil, fmt.Errorf("field spill_dir: %w", err)
	}
	d, err := store.OpenDirUnsynced(root) // nothing reads it after this process
	if err != nil {
		_ = os.RemoveAll(root)
		return nil, fmt.Errorf("field spill_dir: %w", err)
	}
	return &Spill{root: root, dir: d, timeout: timeout}, nil
}

// Root is the spill directory.
func (sp *Spill) Root() string { return sp.root }

// Put writes name's bytes.
func (sp *Spill) Put(name string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), sp.timeout)
	defer cancel()
	if err := sp.dir.PutSnapshot(ctx, name, data); err != nil {
		return fmt.Errorf("spilling its snapshot to %s: %w", sp.root, err)
	}
	return nil
}

// Get reads name's bytes. They stay until Remove: a spilled execution's
// file goes once its program ran past it, not when it is read (a resume
// that cannot start keeps it parked, its file with it).
func (sp *Spill) Get(ctx context.Context, name string) ([]byte, error) {
	data, err := sp.dir.GetSnapshot(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading its spilled snapshot %s from %s: %w", name, sp.root, err)
	}
	return data, nil
}

// Remove deletes name's bytes (none is not an error).
func (sp *Spill) Remove(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), sp.timeout)
	defer cancel()
	if err := sp.dir.DeleteSnapshot(ctx, name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("removing its spilled snapshot %s: %w", name, err)
	}
	return nil
}

// Close removes the spill directory and everything in it.
func (sp *Spill) Close() error { return os.RemoveAll(sp.root) }
