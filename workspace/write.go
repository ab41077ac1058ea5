package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

const writeInput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to write, relative to the workspace root. Missing parent directories are created."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

const writeOutput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file, relative to the workspace root."},
    "bytes_written": {"type": "integer", "description": "Size of the new content in bytes."},
    "created": {"type": "boolean", "description": "True when the file did not exist before."}
  },
  "required": ["path", "bytes_written", "created"],
  "additionalProperties": false
}`

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type writeResult struct {
	Path         string `json:"path"`
	BytesWritten int    `json:"bytes_written"`
	Created      bool   `json:"created"`
}

func (w *Workspace) writeTool() registry.Tool {
	return registry.Tool{
		Name: "write",
		Description: "Write a file in the workspace, replacing all of its content; missing parent directories are created. " +
			"Overwriting an existing file requires reading it first in this session (and again if it changed since); " +
			"prefer edit for small changes to existing files. The content may be at most " + size(maxFileBytes) + ".",
		InputSchema:  json.RawMessage(writeInput),
		OutputSchema: json.RawMessage(writeOutput),
		Body:         w.write,
	}
}

// write creates or replaces a file. Replacing needs the file to have been
// read (the fs-observation rule).
func (w *Workspace) write(ctx context.Context, in api.Input) (api.Output, error) {
	var a writeArgs
	if err := decode(in, &a); err != nil {
		return api.Output{}, err
	}
	if len(a.Content) > maxFileBytes {
		return api.Output{}, failf(ErrTooLarge, "content is %s, more than the %s file size limit: write a smaller file", size(int64(len(a.Content))), size(maxFileBytes))
	}
	t, err := w.resolve(ctx, a.Path)
	if err != nil {
		return api.Output{}, err
	}
	if t.real == "." {
		return api.Output{}, failf(nil, "%q is the workspace root, a directory: give a file path", t.name)
	}
	w.writeMu.Lock()
	defer w.writeMu.Unlock()

	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	fi, err := w.fsys.Lstat(t.real)
	switch {
	case err == nil && fi.IsDir():
		return api.Output{}, failf(nil, "%q is a directory: write needs a file path", t.name)
	case err == nil && !fi.Mode().IsRegular():
		return api.Output{}, failf(nil, "%q is not a regular file (it is a device, socket or pipe): write only replaces regular files", t.name)
	case err == nil:
		if err := w.seen.check(t.name, t.real, fi); err != nil {
			return api.Output{}, err
		}
		flag = os.O_WRONLY // truncated once the open file is checked
	case errors.Is(err, fs.ErrNotExist):
		if dir := path.Dir(t.real); dir != "." {
			if err := w.fsys.MkdirAll(dir, 0o755); err != nil {
				return api.Output{}, describe(path.Dir(t.name), err)
			}
		}
	default:
		return api.Output{}, describe(t.name, err)
	}

	f, err := w.fsys.OpenFile(t.real, flag|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return api.Output{}, failf(ErrNotRead, "file %q appeared while it was being written and has not been read in this session: read it first, then edit or write it", t.name)
	}
	if err != nil {
		return api.Output{}, describe(t.name, err)
	}
	after, err := w.replaceContent(t.name, f, flag&os.O_EXCL == 0, a.Content)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = describe(t.name, cerr)
	}
	if err != nil {
		return api.Output{}, err
	}
	w.seen.record(t.real, after)
	created := flag&os.O_EXCL != 0
	res := writeResult{Path: t.name, BytesWritten: len(a.Content), Created: created}
	verb := "wrote"
	if created {
		verb = "created"
	}
	return output(res, fmt.Sprintf("%s %s (%s)", verb, shown(t.name), size(int64(len(a.Content)))))
}

// replaceContent writes content to the open file f, named name for the
// model. An existing file is checked first, through the open descriptor
// (a regular file of its own: see checkLinks), then truncated. It returns
// the file's state after the write.
func (w *Workspace) replaceContent(name string, f *os.File, existing bool, content string) (fs.FileInfo, error) {
	if existing {
		fi, err := f.Stat()
		if err != nil {
			return nil, describe(name, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, failf(nil, "%q is not a regular file (it is a device, socket or pipe): write only replaces regular files", name)
		}
		if err := w.checkLinks(name, fi); err != nil {
			return nil, err
		}
		if err := f.Truncate(0); err != nil {
			return nil, describe(name, err)
		}
	}
	if _, err := f.WriteString(content); err != nil {
		return nil, describe(name, err)
	}
	after, err := f.Stat()
	if err != nil {
		return nil, describe(name, err)
	}
	return after, nil
}
