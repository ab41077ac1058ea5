package wasmhost

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// SnapshotCalls reads what a snapshot says its run was bound to and waits
// on, without resuming it and without a Runtime: the tools (Program.Tools)
// and the calls it does not answer, in the order of their ids, held or
// dispatched, as Suspended.Calls listed them. It is for a host that keeps
// a description of a suspended run beside its snapshot, to check the one
// against the other: Resume dispatches the calls the snapshot holds,
// whatever the description says. Only the header and the run's table are
// read (a compressed body is inflated up to the table's end, at most
// MaxSnapshotMetaBytes); what Resume checks beyond them (the guest, the
// image, the memory) is left to it. The table's check is compared for a
// stored snapshot (and for a compressed one of formats 2 and 3, whose
// check is of the frame); a compressed one of format 4 has its check of
// the body inflated, which is not read past the table here: Resume
// compares it. Bytes that are not a snapshot are refused with
// ErrSnapshot, saying why.
func SnapshotCalls(snapshot []byte) (tools []string, calls []PendingCall, err error) {
	h, err := readHeader(snapshot)
	if err != nil {
		return nil, nil, err
	}
	var body io.Reader = bytes.NewReader(snapshot[h.bodyAt:])
	if h.codec == codecStored {
		if uint64(len(snapshot)-h.bodyAt) != h.raw {
			return nil, nil, refuse("its body is %d bytes, not the %d its header declares", len(snapshot)-h.bodyAt, h.raw)
		}
		if h.format == snapshotFormat {
			b := snapshot[h.bodyAt:]
			l, err := layout4(b)
			if err != nil {
				return nil, nil, err
			}
			if err := checkTable(h.head, b, l, h.check); err != nil {
				return nil, nil, err
			}
		}
	} else {
		dec, release, err := tableDecoder(snapshot[h.bodyAt:])
		if err != nil {
			return nil, nil, err
		}
		defer release()
		body = dec
	}
	var n [4]byte
	if _, err := io.ReadFull(body, n[:]); err != nil {
		return nil, nil, refuse("its table's length cannot be read: %v", err)
	}
	metaLen := binary.LittleEndian.Uint32(n[:])
	if int64(metaLen) > int64(maxSnapshotMeta) || uint64(metaLen)+12 > h.raw {
		return nil, nil, refuse("its table's length is out of range")
	}
	// The buffer grows with what the body really holds, never with what
	// its length field claims.
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(body, int64(metaLen))); err != nil {
		return nil, nil, refuse("its table cannot be read: %v", err)
	}
	if buf.Len() != int(metaLen) {
		return nil, nil, refuse("its table is cut short: %d of its %d bytes", buf.Len(), metaLen)
	}
	var m snapshotMeta
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return nil, nil, refuse("its table is not valid: %v", err)
	}
	for _, c := range m.Pending {
		if c.Answered {
			continue
		}
		state := CallHeld
		if c.Dispatched {
			state = CallDispatched
		}
		calls = append(calls, PendingCall{ID: c.ID, Name: c.Name, Args: json.RawMessage(c.Args), State: state})
	}
	sortCalls(calls)
	return m.Tools, calls, nil
}

// tableBound is the decoders' bound for SnapshotCalls: what a frame may
// declare (the reader inflates no more than the table, whatever it says).
const tableBound = 1 << 40

// tableDecoder is a streaming decoder of the zstd body in, from the pool,
// with the function that gives it back.
func tableDecoder(in []byte) (*zstd.Decoder, func(), error) {
	pool := decoderPool(tableBound)
	v := pool.Get()
	dec, ok := v.(*zstd.Decoder)
	if !ok {
		return nil, nil, fmt.Errorf("wasmhost: zstd decoder: %v", v)
	}
	if err := dec.Reset(bytes.NewReader(in)); err != nil {
		pool.Put(dec)
		return nil, nil, refuse("its body cannot be inflated: %v", err)
	}
	return dec, func() { _ = dec.Reset(nil); pool.Put(dec) }, nil
}
