package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

const listInput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list, relative to the workspace root (default \".\", the root)."}
  },
  "additionalProperties": false
}`

const listOutput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The directory, relative to the workspace root."},
    "entries": {
      "type": "array",
      "description": "The directory's entries, sorted by name.",
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string"},
          "type": {"type": "string", "enum": ["file", "dir", "symlink", "other"]},
          "size": {"type": "integer", "description": "Size in bytes for files, 0 otherwise."}
        },
        "required": ["name", "type", "size"],
        "additionalProperties": false
      }
    },
    "truncated": {"type": "boolean", "description": "True when there were more entries than the cap."}
  },
  "required": ["path", "entries", "truncated"],
  "additionalProperties": false
}`

type listArgs struct {
	Path string `json:"path"`
}

type listEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

type listResult struct {
	Path      string      `json:"path"`
	Entries   []listEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
}

func (w *Workspace) listTool() registry.Tool {
	return registry.Tool{
		Name: "list",
		Description: fmt.Sprintf("List a directory of the workspace (default the root): each entry's name, type "+
			"(file, dir, symlink or other) and size, sorted by name, at most %d entries. It reads at most %d entries of a directory.", w.opts.MaxMatches, maxScanEntries),
		InputSchema:     json.RawMessage(listInput),
		OutputSchema:    json.RawMessage(listOutput),
		ConcurrencySafe: true,
		Body:            w.list,
	}
}

// list returns the entries of one directory, sorted and capped.
func (w *Workspace) list(ctx context.Context, in api.Input) (api.Output, error) {
	var a listArgs
	if err := decode(in, &a); err != nil {
		return api.Output{}, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := w.resolve(ctx, a.Path)
	if err != nil {
		return api.Output{}, err
	}
	fi, err := w.fsys.Stat(t.real)
	if err != nil {
		return api.Output{}, describe(t.name, err)
	}
	if !fi.IsDir() {
		return api.Output{}, failf(nil, "%q is a file, not a directory: use read to see its content", t.name)
	}
	first, total, more, err := w.firstEntries(ctx, t.real, w.opts.MaxMatches)
	if err != nil {
		return api.Output{}, describeRead(t.name, err)
	}
	res := listResult{Path: t.name, Entries: []listEntry{}, Truncated: total > len(first) || more}
	for _, d := range first {
		e := listEntry{Name: d.Name(), Type: entryType(d.Type())}
		if e.Type == "file" {
			if info, err := d.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		res.Entries = append(res.Entries, e)
	}
	return output(res, listText(res, total, more))
}

// firstEntries returns the first n entries by name of the directory real,
// and how many entries it read. It reads at most maxScanEntries, in
// batches, keeping only the n first so far, so a huge directory costs
// bounded memory; more reports that it stopped there.
func (w *Workspace) firstEntries(ctx context.Context, real string, n int) (first []fs.DirEntry, total int, more bool, err error) {
	f, err := w.fsys.Open(real)
	if err != nil {
		return nil, 0, false, err
	}
	defer f.Close()
	byName := func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) }
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, false, err
		}
		if total == w.scan {
			probe, err := f.ReadDir(1)
			more = len(probe) > 0 && err == nil
			break
		}
		batch, err := f.ReadDir(min(dirBatch, w.scan-total))
		total += len(batch)
		first = append(first, batch...)
		if len(first) >= 2*n+dirBatch {
			slices.SortFunc(first, byName)
			first = slices.Delete(first, n, len(first))
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, 0, false, err
		}
	}
	slices.SortFunc(first, byName)
	if len(first) > n {
		first = first[:n]
	}
	return first, total, more, nil
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// listText shows one entry a line: "name/" for a directory, "name@" for a
// symbolic link, "name (size)" for a file.
func listText(r listResult, total int, more bool) string {
	if len(r.Entries) == 0 {
		return fmt.Sprintf("(%s is empty)", shown(r.Path))
	}
	var b strings.Builder
	for _, e := range r.Entries {
		switch e.Type {
		case "dir":
			fmt.Fprintf(&b, "%s/\n", shown(e.Name))
		case "symlink":
			fmt.Fprintf(&b, "%s@\n", shown(e.Name))
		case "file":
			fmt.Fprintf(&b, "%s (%s)\n", shown(e.Name), size(e.Size))
		default:
			fmt.Fprintf(&b, "%s\n", shown(e.Name))
		}
	}
	switch {
	case more:
		fmt.Fprintf(&b, "[showing the first %d by name of the first %d entries read: the directory has more, and list reads at most %d]\n", len(r.Entries), total, total)
	case r.Truncated:
		fmt.Fprintf(&b, "[showing %d of %d entries]\n", len(r.Entries), total)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
