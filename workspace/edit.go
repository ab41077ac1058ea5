package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ptcx/ptcx/registry"
)

// maxEditBytes bounds the size of a file edit will load (32 MiB).
const maxEditBytes = 32 << 20

const editInput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to edit, relative to the workspace root. It must exist and have been read."},
    "old_string": {"type": "string", "description": "Exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true."},
    "new_string": {"type": "string", "description": "Text to put in its place (different from old_string)."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false)."}
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
}`

const editOutput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file, relative to the workspace root."},
    "replacements": {"type": "integer", "description": "How many occurrences were replaced."}
  },
  "required": ["path", "replacements"],
  "additionalProperties": false
}`

type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

type editResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
}

func (w *Workspace) editTool() registry.Tool {
	return registry.Tool{
		Name: "edit",
		Description: "Replace exact text in an existing file of the workspace. old_string must match the file exactly " +
			"(whitespace and indentation included) and occur once, unless replace_all is true. " +
			"The file must have been read in this session, and not changed since.",
		InputSchema:  json.RawMessage(editInput),
		OutputSchema: json.RawMessage(editOutput),
		Body:         w.edit,
	}
}

// edit replaces old_string with new_string in a file that has been read.
func (w *Workspace) edit(_ context.Context, in registry.Input) (registry.Output, error) {
	var a editArgs
	if err := decode(in, &a); err != nil {
		return registry.Output{}, err
	}
	switch {
	case a.OldString == "":
		return registry.Output{}, failf(nil, "old_string is empty: give the exact text to replace (to create a file or replace all of it, use write)")
	case a.OldString == a.NewString:
		return registry.Output{}, failf(nil, "old_string and new_string are the same: there is nothing to change")
	}
	t, err := w.resolve(a.Path)
	if err != nil {
		return registry.Output{}, err
	}
	w.writeMu.Lock()
	defer w.writeMu.Unlock()

	f, fi, err := w.openFile(t, os.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		return registry.Output{}, failf(fs.ErrNotExist, "file %q does not exist: edit changes existing files; use write to create it, or list and glob to find the right path", t.name)
	}
	if err != nil {
		return registry.Output{}, err
	}
	defer f.Close()
	if err := w.seen.check(t.name, t.real, fi); err != nil {
		return registry.Output{}, err
	}
	if fi.Size() > maxEditBytes {
		return registry.Output{}, failf(ErrTooLarge, "file %q is %s, more than the %s edit limit", t.name, size(fi.Size()), size(maxEditBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEditBytes+1))
	if err != nil {
		return registry.Output{}, describe(t.name, err)
	}
	if looksBinary(data[:min(len(data), sniffBytes)]) {
		return registry.Output{}, failf(ErrBinary, "file %q is binary (it contains NUL bytes or invalid UTF-8): edit changes text files only", t.name)
	}
	text := string(data)
	n := strings.Count(text, a.OldString)
	switch {
	case n == 0:
		return registry.Output{}, failf(ErrNoMatch, "old_string was not found in %q: it must match the file's text exactly, whitespace and indentation included; read the file again and copy the text to replace", t.name)
	case n > 1 && !a.ReplaceAll:
		return registry.Output{}, failf(ErrAmbiguous, "old_string occurs %d times in %q: include more surrounding text to make it unique, or set replace_all to true to replace every occurrence", n, t.name)
	case !a.ReplaceAll:
		text = strings.Replace(text, a.OldString, a.NewString, 1)
	default:
		text = strings.ReplaceAll(text, a.OldString, a.NewString)
	}
	if err := overwrite(f, text); err != nil {
		return registry.Output{}, describe(t.name, err)
	}
	after, err := f.Stat()
	if err != nil {
		return registry.Output{}, describe(t.name, err)
	}
	w.seen.record(t.real, after)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	return output(editResult{Path: t.name, Replacements: n}, fmt.Sprintf("edited %s: replaced %d occurrence%s", t.name, n, plural))
}

// overwrite replaces the content of the open file f with text, through the
// same descriptor that was read, so the file cannot be swapped in between.
func overwrite(f *os.File, text string) error {
	if _, err := f.WriteAt([]byte(text), 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(text)))
}
