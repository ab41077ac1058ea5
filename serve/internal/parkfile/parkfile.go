// Package parkfile is the frame of a parked execution's bytes in ptcx
// serve's store or spill: what the server knows of the execution (its
// meta, JSON) beside its program (executor.Parked.Marshal), so that any
// node can continue it.
//
//	"PTCXSRVP" | version u32 | meta length u32 | meta (JSON) | program
//
// The program's bytes carry their own checksum and bounds
// (executor.RestoreParked); the meta is bounded by MaxMetaBytes. The
// server checks what the meta says (serve/parkfile.go); this package only
// frames it. It imports only the standard library.
package parkfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

const (
	// Magic starts every parked execution's bytes.
	Magic = "PTCXSRVP"
	// Version is the frame's version, the only one read.
	Version = 1
	// MaxMetaBytes bounds the meta: the client tools' schemas (within the
	// request's size limit) and up to max_events call records.
	MaxMetaBytes = 64 << 20
	// header is the magic, the version and the meta's length.
	header = len(Magic) + 8
)

// ErrFormat wraps every refusal of Decode (and of the server's checks of
// the meta it decodes).
var ErrFormat = errors.New("not a parked execution of ptcx serve")

// Encode frames meta, as JSON, and program.
func Encode(meta any, program []byte) ([]byte, error) {
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	if len(mb) > MaxMetaBytes {
		return nil, fmt.Errorf("its meta is %d bytes, over %d", len(mb), MaxMetaBytes)
	}
	out := make([]byte, 0, header+len(mb)+len(program))
	out = append(out, Magic...)
	out = binary.BigEndian.AppendUint32(out, Version)
	out = binary.BigEndian.AppendUint32(out, uint32(len(mb)))
	out = append(out, mb...)
	return append(out, program...), nil
}

// Decode reads data's meta into meta (a pointer; a member it does not
// know is refused) and returns the program, a slice of data. It allocates
// nothing beyond what the meta decodes to.
func Decode(data []byte, meta any) ([]byte, error) {
	if len(data) < header || string(data[:len(Magic)]) != Magic {
		return nil, Errorf("it does not start with %q and its %d-byte header", Magic, header)
	}
	if v := binary.BigEndian.Uint32(data[len(Magic):]); v != Version {
		return nil, Errorf("it is of version %d; this node reads version %d only", v, Version)
	}
	n := uint64(binary.BigEndian.Uint32(data[len(Magic)+4:]))
	if n > MaxMetaBytes || n > uint64(len(data)-header) {
		return nil, Errorf("its meta claims %d bytes and %d are left (at most %d)", n, len(data)-header, MaxMetaBytes)
	}
	d := json.NewDecoder(bytes.NewReader(data[header : header+int(n)]))
	d.DisallowUnknownFields()
	if err := d.Decode(meta); err != nil {
		return nil, Errorf("its meta: %v", err)
	}
	return data[header+int(n):], nil
}

// Errorf is a refusal of bytes that are not a parked execution's,
// wrapping ErrFormat.
func Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}
