package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

const readInput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File to read, relative to the workspace root."},
    "start_line": {"type": "integer", "minimum": 1, "description": "First line to return, 1-based (default 1)."},
    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to return, inclusive (default: the last line)."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

const readOutput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file, relative to the workspace root."},
    "content": {"type": "string", "description": "The lines read, with their line endings, without line numbers."},
    "start_line": {"type": "integer", "description": "Line number of the first line in content."},
    "end_line": {"type": "integer", "description": "Line number of the last line in content (start_line - 1 when content is empty)."},
    "total_lines": {"type": "integer", "description": "Number of lines in the file."},
    "truncated": {"type": "boolean", "description": "True when the file continues after end_line."}
  },
  "required": ["path", "content", "start_line", "end_line", "total_lines", "truncated"],
  "additionalProperties": false
}`

type readArgs struct {
	Path      string `json:"path"`
	StartLine *int   `json:"start_line"`
	EndLine   *int   `json:"end_line"`
}

type readResult struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated"`
}

func (w *Workspace) readTool() registry.Tool {
	return registry.Tool{
		Name: "read",
		Description: fmt.Sprintf("Read a text file in the workspace. Returns its content (no line numbers) and its line count; "+
			"give start_line and end_line (1-based, inclusive) to read part of it. Files over %s must be read in line ranges "+
			"of at most %s. Binary files are refused. A file must be read before write or edit may change it.",
			size(w.opts.MaxReadBytes), size(w.opts.MaxReadBytes)),
		InputSchema:     json.RawMessage(readInput),
		OutputSchema:    json.RawMessage(readOutput),
		ConcurrencySafe: true,
		Body:            w.read,
		Policy:          readPolicy(),
	}
}

// read returns a text file, whole or a range of its lines, and records it
// as read.
func (w *Workspace) read(ctx context.Context, in api.Input) (api.Output, error) {
	var a readArgs
	if err := decode(in, &a); err != nil {
		return api.Output{}, err
	}
	start, end := 1, 0
	if a.StartLine != nil {
		start = *a.StartLine
	}
	if a.EndLine != nil {
		end = *a.EndLine
	}
	switch {
	case start < 1:
		return api.Output{}, failf(nil, "start_line must be 1 or more: lines are numbered from 1")
	case a.EndLine != nil && end < start:
		return api.Output{}, failf(nil, "end_line %d is before start_line %d: give a range with start_line <= end_line", end, start)
	}
	t, err := w.resolve(ctx, a.Path)
	if err != nil {
		return api.Output{}, err
	}
	f, fi, err := w.openFile(t, os.O_RDONLY)
	if err != nil {
		return api.Output{}, err
	}
	defer f.Close()
	limit := w.opts.MaxReadBytes
	if fi.Size() > limit && a.StartLine == nil && a.EndLine == nil {
		return api.Output{}, failf(ErrTooLarge, "file %q is %s, more than the %s read limit: read it in parts by giving start_line and end_line (for example 1 and 1000), or use grep to find the lines you need",
			t.name, size(fi.Size()), size(limit))
	}
	br := bufio.NewReaderSize(f, 64<<10)
	sample, err := sniff(br)
	if err != nil {
		return api.Output{}, describe(t.name, err)
	}
	if looksBinary(sample) {
		return api.Output{}, failf(ErrBinary, "file %q is binary (it contains NUL bytes or invalid UTF-8): read returns text files only", t.name)
	}
	res, err := w.readLines(ctx, br, t.name, start, end)
	if err != nil {
		return api.Output{}, err
	}
	w.seen.record(t.real, fi)
	return output(res, readText(res))
}

// readLines returns lines start..end (end 0: to the end of the file) of br,
// at most MaxReadBytes of them, and counts every line of the file.
func (w *Workspace) readLines(ctx context.Context, br *bufio.Reader, name string, start, end int) (readResult, error) {
	limit := w.opts.MaxReadBytes
	lr := newLineReader(ctx, br)
	var content []byte
	total, last := 0, start-1
	for {
		in := total+1 >= start && (end == 0 || total+1 <= end)
		keep, stop := 0, 0
		if in {
			room := int(limit - int64(len(content)))
			keep, stop = room+1, room
		}
		line, n, err := lr.next(keep, stop)
		if err == io.EOF {
			break
		}
		if err != nil {
			return readResult{}, describeRead(name, err)
		}
		total++
		if !in {
			continue
		}
		if int64(len(content)+n) > limit {
			return readResult{}, rangeTooLarge(name, start, end, last, total, limit)
		}
		content = append(content, line...)
		last = total
	}
	if start > total && (start > 1 || total > 0) {
		return readResult{}, failf(nil, "start_line %d is past the end of %q, which has %d lines", start, name, total)
	}
	return readResult{
		Path:       name,
		Content:    string(content),
		StartLine:  start,
		EndLine:    last,
		TotalLines: total,
		Truncated:  last < total,
	}, nil
}

// describeRead is describe for an error met while reading lines: the
// context's error passes as it is.
func describeRead(name string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return describe(name, err)
}

// rangeTooLarge explains that lines start..end of name do not fit in
// limit: line over overflowed after lines start..last fit. read stops at
// that line, so it does not know the line's full length.
func rangeTooLarge(name string, start, end, last, over int, limit int64) error {
	if last < start {
		return failf(ErrTooLarge, "line %d of %q alone is more than the %s read limit: read cannot return it; use grep to find what you need in it",
			over, name, size(limit))
	}
	to := "the end of the file"
	if end > 0 {
		to = fmt.Sprintf("line %d", end)
	}
	return failf(ErrTooLarge, "lines %d to %s of %q are more than the %s read limit: lines %d-%d fit, so read those (start_line %d, end_line %d), then continue from line %d",
		start, to, name, size(limit), start, last, start, last, last+1)
}

// readText is what the model is shown: the content itself, with a note when
// it is only part of the file.
func readText(r readResult) string {
	if r.TotalLines == 0 {
		return fmt.Sprintf("(%s is empty)", shown(r.Path))
	}
	if r.StartLine == 1 && !r.Truncated {
		return r.Content
	}
	var b strings.Builder
	b.WriteString(r.Content)
	if r.Content != "" && !strings.HasSuffix(r.Content, "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[lines %d-%d of %d in %s", r.StartLine, r.EndLine, r.TotalLines, shown(r.Path))
	if r.Truncated {
		fmt.Fprintf(&b, "; continue with start_line %d", r.EndLine+1)
	}
	b.WriteString("]")
	return b.String()
}
