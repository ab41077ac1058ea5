package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

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
			"(file, dir, symlink or other) and size, sorted by name, at most %d entries.", w.opts.MaxMatches),
		InputSchema:     json.RawMessage(listInput),
		OutputSchema:    json.RawMessage(listOutput),
		ConcurrencySafe: true,
		Body:            w.list,
	}
}

// list returns the entries of one directory, sorted and capped.
func (w *Workspace) list(ctx context.Context, in registry.Input) (registry.Output, error) {
	var a listArgs
	if err := decode(in, &a); err != nil {
		return registry.Output{}, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	t, err := w.resolve(a.Path)
	if err != nil {
		return registry.Output{}, err
	}
	fi, err := w.fsys.Stat(t.real)
	if err != nil {
		return registry.Output{}, describe(t.name, err)
	}
	if !fi.IsDir() {
		return registry.Output{}, failf(nil, "%q is a file, not a directory: use read to see its content", t.name)
	}
	dirents, err := fs.ReadDir(w.fsys.FS(), t.real) // sorted by name
	if err != nil {
		return registry.Output{}, describe(t.name, err)
	}
	if err := ctx.Err(); err != nil {
		return registry.Output{}, err
	}
	res := listResult{Path: t.name, Entries: []listEntry{}}
	for _, d := range dirents {
		if len(res.Entries) == w.opts.MaxMatches {
			res.Truncated = true
			break
		}
		e := listEntry{Name: d.Name(), Type: entryType(d.Type())}
		if e.Type == "file" {
			if info, err := d.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		res.Entries = append(res.Entries, e)
	}
	return output(res, listText(res, len(dirents)))
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
func listText(r listResult, total int) string {
	if len(r.Entries) == 0 {
		return fmt.Sprintf("(%s is empty)", r.Path)
	}
	var b strings.Builder
	for _, e := range r.Entries {
		switch e.Type {
		case "dir":
			fmt.Fprintf(&b, "%s/\n", e.Name)
		case "symlink":
			fmt.Fprintf(&b, "%s@\n", e.Name)
		case "file":
			fmt.Fprintf(&b, "%s (%s)\n", e.Name, size(e.Size))
		default:
			fmt.Fprintf(&b, "%s\n", e.Name)
		}
	}
	if r.Truncated {
		fmt.Fprintf(&b, "[showing %d of %d entries]\n", len(r.Entries), total)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
