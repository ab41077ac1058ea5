package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxRecordBytes is the longest trace line a Reader accepts by
// default: 256 MiB, room for a program of the largest size and thousands of
// calls with large arguments.
const DefaultMaxRecordBytes = 256 << 20

// Reader reads records from JSON lines. Blank lines are skipped.
type Reader struct {
	br   *bufio.Reader
	max  int
	line int
}

// NewReader returns a reader of r whose lines may be up to maxBytes long (0
// means DefaultMaxRecordBytes).
func NewReader(r io.Reader, maxBytes int) *Reader {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxRecordBytes
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: maxBytes}
}

// Line returns the number of the last line read, from 1.
func (r *Reader) Line() int { return r.line }

// Next returns the next record, or io.EOF after the last. A line that is too
// long, is not JSON, or is not a record of this Version is an error naming
// the line; the reader can go on with the next line after it.
func (r *Reader) Next() (Record, error) {
	for {
		b, err := r.readLine()
		if err != nil {
			return Record{}, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		rec, err := Decode(b)
		if err != nil {
			return Record{}, fmt.Errorf("trace line %d: %w", r.line, err)
		}
		return rec, nil
	}
}

// ErrTooLong is the error of a line longer than the reader's limit.
var ErrTooLong = errors.New("trace: the line is too long")

func (r *Reader) readLine() ([]byte, error) {
	var line []byte
	over := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !over {
			line = append(line, chunk...)
			if len(bytes.TrimSuffix(line, []byte("\n"))) > r.max {
				over, line = true, nil
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(chunk) == 0 && len(line) == 0 && !over:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("trace: reading line %d: %w", r.line+1, err)
		}
		r.line++
		if over {
			return nil, fmt.Errorf("trace line %d: %w: over %d bytes (raise the limit, or record fewer or smaller calls)", r.line, ErrTooLong, r.max)
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
}

// Decode parses one record and checks it (Record.Check).
func Decode(b []byte) (Record, error) {
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, fmt.Errorf("not a trace record: %w", err)
	}
	if err := rec.Check(); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// Check reports whether rec is a record Replay can use: a version this
// package reads, nested calls numbered 1, 2, … in order, each with a tool
// and arguments and, when it failed, an error (and no handle), completion
// ranks that are a permutation of 1…n, and handles passed and read that
// earlier calls answered with.
func (rec *Record) Check() error {
	if rec.Version < minVersion || rec.Version > Version {
		return fmt.Errorf("trace version %d: this ptcx reads versions %d to %d", rec.Version, minVersion, Version)
	}
	seen := make([]bool, len(rec.Calls)+1)
	for i, c := range rec.Calls {
		if c.Index != i+1 {
			return fmt.Errorf("call %d has index %d: calls must be numbered 1, 2, … in submission order", i+1, c.Index)
		}
		if c.Tool == "" || len(c.Args) == 0 {
			return fmt.Errorf("call %d has no tool or no arguments", c.Index)
		}
		if c.Completed < 1 || c.Completed > len(rec.Calls) || seen[c.Completed] {
			return fmt.Errorf("call %d has completion rank %d: ranks must be 1…%d, each once", c.Index, c.Completed, len(rec.Calls))
		}
		seen[c.Completed] = true
		if !c.OK && c.Error == nil {
			return fmt.Errorf("call %d failed with no error", c.Index)
		}
		if c.Handle != nil && !c.OK {
			return fmt.Errorf("call %d failed and has a handle: only a successful call answers with one", c.Index)
		}
		for _, p := range c.Handles {
			if err := rec.checkHandleCall(p.Call, c.Index); err != nil {
				return fmt.Errorf("call %d was passed handle %q %w", c.Index, p.ID, err)
			}
		}
	}
	if rec.HandleOverBytes < 0 {
		return fmt.Errorf("handle_over_bytes %d: want 0 (none) or more", rec.HandleOverBytes)
	}
	for k, r := range rec.Reads {
		if r.As != "text" && r.As != "json" {
			return fmt.Errorf("read %d of a handle is as %q: want text or json", k+1, r.As)
		}
		if err := rec.checkHandleCall(r.Call, len(rec.Calls)+1); err != nil {
			return fmt.Errorf("read %d is of handle %q %w", k+1, r.Handle, err)
		}
	}
	return nil
}

// checkHandleCall reports whether call (0: one the record does not have)
// can have made a handle that call before saw.
func (rec *Record) checkHandleCall(call, before int) error {
	switch {
	case call == 0:
		return nil
	case call < 0 || call >= before:
		return fmt.Errorf("of call %d: want a call before %d (or 0, from before the record)", call, before)
	case rec.Calls[call-1].Handle == nil:
		return fmt.Errorf("of call %d, which answered with no handle", call)
	}
	return nil
}
