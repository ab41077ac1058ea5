package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// dirBatch is how many entries one directory read asks for.
const dirBatch = 256

// walk calls found, in lexical order, for every file (not directory) under
// the directory t whose path relative to t matches pat (nil: every file),
// with its workspace-relative name and its resolved path in the root, until
// found returns false. Directory links are not entered; a link to a file is
// reported only when it resolves inside the workspace.
//
// The walk is bounded: it reads at most maxScanEntries directory entries in
// all and does not enter directories more than maxPathDepth levels below
// the root. When it stops at a bound, cut says which, for the model; the
// files found until then have been reported. It checks ctx at every entry.
func (w *Workspace) walk(ctx context.Context, t target, pat globPattern, found func(name, real string) bool) (cut string, err error) {
	fi, err := w.fsys.Stat(t.real)
	if err != nil {
		return "", describe(t.name, err)
	}
	if !fi.IsDir() {
		return "", failf(nil, "%q is a file, not a directory: give a directory to search", t.name)
	}
	wk := &walker{w: w, ctx: ctx, budget: w.scan}
	top, err := wk.open(t.real, pat.start())
	if err != nil {
		return "", describeRead(t.name, err)
	}
	stack := []*dirFrame{top}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		d := stack[len(stack)-1]
		if len(d.entries) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		e := d.entries[0]
		d.entries = d.entries[1:]
		p := path.Join(d.real, e.Name())
		states := pat.step(d.states, e.Name())
		full, deeper := pat.result(states)
		if e.IsDir() {
			switch {
			case !deeper:
			case depth(p) >= maxPathDepth:
				wk.deep = true
			case wk.budget == 0: // the entry budget is spent: opening it would read nothing
				wk.full = true
			default:
				sub, err := wk.open(p, states)
				if err != nil && ctx.Err() != nil {
					return "", ctx.Err()
				}
				if err == nil { // an unreadable subdirectory is skipped
					stack = append(stack, sub)
				}
			}
			continue
		}
		if !full {
			continue
		}
		real, ok := w.fileAt(ctx, p, e)
		if ok && !found(display(t.name, t.real, p), real) {
			return "", nil
		}
	}
	return wk.cut(), nil
}

// walker is the state of one walk: what is left of its entry budget, and
// whether it met a bound.
type walker struct {
	w      *Workspace
	ctx    context.Context
	budget int  // entries that may still be read
	full   bool // a directory was not read to its end: the budget ran out
	deep   bool // a directory was not entered: it is too deep
}

// dirFrame is a directory being walked: its entries not yet visited, sorted,
// and its glob state.
type dirFrame struct {
	real    string
	entries []fs.DirEntry
	states  []bool
}

// open reads the directory real, in batches and at most the budget left,
// and sorts its entries.
func (wk *walker) open(real string, states []bool) (*dirFrame, error) {
	entries, more, err := wk.w.readDir(wk.ctx, real, wk.budget)
	if err != nil {
		return nil, err
	}
	wk.budget -= len(entries)
	wk.full = wk.full || more
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return &dirFrame{real: real, entries: entries, states: states}, nil
}

// cut says which bound the walk met, if any.
func (wk *walker) cut() string {
	switch {
	case wk.full:
		return fmt.Sprintf("stopped after reading %d directory entries, the search limit", wk.w.scan)
	case wk.deep:
		return fmt.Sprintf("directories more than %d levels deep were not searched", maxPathDepth)
	}
	return ""
}

// readDir reads at most max entries of the directory real, unsorted, in
// batches of dirBatch, checking ctx between batches. more reports that the
// directory has entries beyond max.
func (w *Workspace) readDir(ctx context.Context, real string, max int) (entries []fs.DirEntry, more bool, err error) {
	f, err := w.fsys.Open(real)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		if len(entries) == max {
			probe, err := f.ReadDir(1)
			return entries, len(probe) > 0 && err == nil, nil
		}
		batch, err := f.ReadDir(min(dirBatch, max-len(entries)))
		entries = append(entries, batch...)
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			return entries, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
}

// fileAt returns where the entry d at p leads, if it is a file: p itself,
// or for a symbolic link its resolved target, when that stays inside the
// workspace and is not a directory.
func (w *Workspace) fileAt(ctx context.Context, p string, d fs.DirEntry) (string, bool) {
	if d.Type()&fs.ModeSymlink == 0 {
		return p, true
	}
	real, err := w.follow(ctx, p, p)
	if err != nil {
		return "", false
	}
	fi, err := w.fsys.Stat(real)
	return real, err == nil && !fi.IsDir()
}
