package snapshot

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Calls reads the tools and the unanswered calls of a snapshot's table
// without resuming it (wasmhost.SnapshotCalls).
func Calls(snapshot []byte) (tools []string, calls []Call, err error) {
	h, err := ReadHeader(snapshot)
	if err != nil {
		return nil, nil, err
	}
	var body io.Reader = bytes.NewReader(snapshot[h.BodyAt:])
	if h.Codec == CodecStored {
		if uint64(len(snapshot)-h.BodyAt) != h.Raw {
			return nil, nil, Refuse("its body is %d bytes, not the %d its header declares", len(snapshot)-h.BodyAt, h.Raw)
		}
		if h.Format == Format {
			b := snapshot[h.BodyAt:]
			l, err := Layout4(b)
			if err != nil {
				return nil, nil, err
			}
			if err := checkTable(h.head, b, l, h.check); err != nil {
				return nil, nil, err
			}
		}
	} else {
		dec, release, err := tableDecoder(snapshot[h.BodyAt:])
		if err != nil {
			return nil, nil, err
		}
		defer release()
		body = dec
	}
	var n [4]byte
	if _, err := io.ReadFull(body, n[:]); err != nil {
		return nil, nil, Refuse("its table's length cannot be read: %v", err)
	}
	metaLen := binary.LittleEndian.Uint32(n[:])
	if int64(metaLen) > int64(maxMeta) || uint64(metaLen)+12 > h.Raw {
		return nil, nil, Refuse("its table's length is out of range")
	}
	// The buffer grows with what the body really holds, never with what
	// its length field claims.
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(body, int64(metaLen))); err != nil {
		return nil, nil, Refuse("its table cannot be read: %v", err)
	}
	if buf.Len() != int(metaLen) {
		return nil, nil, Refuse("its table is cut short: %d of its %d bytes", buf.Len(), metaLen)
	}
	var m Meta
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return nil, nil, Refuse("its table is not valid: %v", err)
	}
	for _, c := range m.Pending {
		if !c.Answered {
			calls = append(calls, c)
		}
	}
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
		return nil, nil, Refuse("its body cannot be inflated: %v", err)
	}
	return dec, func() { _ = dec.Reset(nil); pool.Put(dec) }, nil
}
