package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Writer writes records as JSON lines. It is safe for concurrent use; each
// record is one Write to the underlying writer.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
	err error
}

// NewWriter returns a writer of records to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes rec as one line. After a failed write every later one fails
// with the same error.
func (w *Writer) Write(rec Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	if err := Encode(&w.buf, rec); err != nil {
		w.err = err
		return err
	}
	if _, err := w.w.Write(w.buf.Bytes()); err != nil {
		w.err = fmt.Errorf("trace: writing a record: %w", err)
	}
	return w.err
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Encode writes rec to b as one JSON line, HTML characters unescaped.
func Encode(b *bytes.Buffer, rec Record) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return fmt.Errorf("trace: encoding record %s: %w", rec.ID, err)
	}
	return nil
}
