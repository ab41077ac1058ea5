package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

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
			"The file must have been read in this session, and not changed since. The file, before and after the edit, may be at most " + size(maxFileBytes) + ".",
		InputSchema:  json.RawMessage(editInput),
		OutputSchema: json.RawMessage(editOutput),
		Body:         w.edit,
	}
}

// edit replaces old_string with new_string in a file that has been read.
// Neither the file nor the result may exceed maxFileBytes: the result's
// size is computed before it is built.
func (w *Workspace) edit(ctx context.Context, in api.Input) (api.Output, error) {
	var a editArgs
	if err := decode(in, &a); err != nil {
		return api.Output{}, err
	}
	switch {
	case a.OldString == "":
		return api.Output{}, failf(nil, "old_string is empty: give the exact text to replace (to create a file or replace all of it, use write)")
	case a.OldString == a.NewString:
		return api.Output{}, failf(nil, "old_string and new_string are the same: there is nothing to change")
	case len(a.NewString) > maxFileBytes:
		return api.Output{}, failf(ErrTooLarge, "new_string is %s, more than the %s file size limit", size(int64(len(a.NewString))), size(maxFileBytes))
	}
	t, err := w.resolve(ctx, a.Path)
	if err != nil {
		return api.Output{}, err
	}
	w.writeMu.Lock()
	defer w.writeMu.Unlock()

	f, fi, err := w.openFile(t, os.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		return api.Output{}, failf(fs.ErrNotExist, "file %q does not exist: edit changes existing files; use write to create it, or list and glob to find the right path", t.name)
	}
	if err != nil {
		return api.Output{}, err
	}
	defer f.Close()
	if err := w.seen.check(t.name, t.real, fi); err != nil {
		return api.Output{}, err
	}
	if fi.Size() > maxFileBytes {
		return api.Output{}, failf(ErrTooLarge, "file %q is %s, more than the %s file size limit: edit cannot load it", t.name, size(fi.Size()), size(maxFileBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return api.Output{}, describe(t.name, err)
	}
	if len(data) > maxFileBytes { // it grew since the stat
		return api.Output{}, failf(ErrTooLarge, "file %q is more than the %s file size limit: edit cannot load it", t.name, size(maxFileBytes))
	}
	if looksBinary(data[:min(len(data), sniffBytes)]) {
		return api.Output{}, failf(ErrBinary, "file %q is binary (it contains NUL bytes or invalid UTF-8): edit changes text files only", t.name)
	}
	old, repl := []byte(a.OldString), []byte(a.NewString)
	n := bytes.Count(data, old)
	switch {
	case n == 0:
		return api.Output{}, failf(ErrNoMatch, "old_string was not found in %q: it must match the file's text exactly, whitespace and indentation included; read the file again and copy the text to replace", t.name)
	case n > 1 && !a.ReplaceAll:
		return api.Output{}, failf(ErrAmbiguous, "old_string occurs %d times in %q: include more surrounding text to make it unique, or set replace_all to true to replace every occurrence", n, t.name)
	}
	if !fitsAfterEdit(len(data), n, len(old), len(repl), maxFileBytes) {
		return api.Output{}, failf(ErrTooLarge, "replacing %d occurrence%s of old_string in %q would make it %s, more than the %s file size limit: replace fewer occurrences or a shorter new_string",
			n, plural(n), t.name, size(editedSize(len(data), n, len(old), len(repl))), size(maxFileBytes))
	}
	if err := ctx.Err(); err != nil {
		return api.Output{}, err
	}
	if err := overwrite(f, bytes.Replace(data, old, repl, n)); err != nil {
		return api.Output{}, describe(t.name, err)
	}
	after, err := f.Stat()
	if err != nil {
		return api.Output{}, describe(t.name, err)
	}
	w.seen.record(t.real, after)
	return output(editResult{Path: t.name, Replacements: n}, fmt.Sprintf("edited %s: replaced %d occurrence%s", shown(t.name), n, plural(n)))
}

// fitsAfterEdit reports whether a file of size bytes, with n occurrences of
// an oldLen-byte string each replaced by a newLen-byte one, is at most
// limit bytes. It divides rather than multiplies, so it cannot overflow
// however large n and newLen are (all arguments are non-negative, n >= 1,
// size <= limit).
func fitsAfterEdit(size, n, oldLen, newLen, limit int) bool {
	if newLen <= oldLen {
		return true // the file does not grow
	}
	return (newLen - oldLen) <= (limit-size)/n
}

// editedSize is the edited file's size, for a message after fitsAfterEdit
// said no; it saturates instead of overflowing.
func editedSize(size, n, oldLen, newLen int) int64 {
	grow := int64(newLen - oldLen)
	if grow > (math.MaxInt64-int64(size))/int64(n) {
		return math.MaxInt64
	}
	return int64(size) + int64(n)*grow
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// overwrite replaces the content of the open file f with text, through the
// same descriptor that was read, so the file cannot be swapped in between.
func overwrite(f *os.File, text []byte) error {
	if _, err := f.WriteAt(text, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(text)))
}
