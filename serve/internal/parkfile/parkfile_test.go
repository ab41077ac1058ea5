package parkfile

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// meta is a test's meta.
type meta struct {
	ID string `json:"id"`
}

const metaSample = `{"id":"ex_1"}`

// frame puts meta and program into the frame by hand.
func frame(meta, program []byte) []byte {
	out := append([]byte(Magic), 0, 0, 0, Version)
	out = binary.BigEndian.AppendUint32(out, uint32(len(meta)))
	return append(append(out, meta...), program...)
}

func TestEncode_Decode_roundTrip(t *testing.T) {
	data, err := Encode(meta{ID: "ex_1"}, []byte("PROGRAM"))
	require.NoError(t, err)
	require.Equal(t, frame([]byte(metaSample), []byte("PROGRAM")), data)
	var m meta
	program, err := Decode(data, &m)
	require.NoError(t, err)
	require.Equal(t, "ex_1", m.ID)
	require.Equal(t, []byte("PROGRAM"), program)
}

func TestDecode_refusals(t *testing.T) {
	good := frame([]byte(metaSample), []byte("PROGRAM"))
	v2 := bytes.Clone(good)
	v2[11] = 2
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "does not start with"},
		{"another format", []byte("PTCXPARK and more bytes"), "does not start with \"PTCXSRVP\" and its 16-byte header"},
		{"another version", v2, "version 2"},
		{"meta past the input", frame([]byte(metaSample), nil)[:20], "its meta claims 13 bytes and 4 are left"},
		{"meta over its bound", func() []byte {
			b := frame(nil, nil)
			binary.BigEndian.PutUint32(b[12:], MaxMetaBytes+1)
			return append(b, make([]byte, 64)...)
		}(), "its meta claims 67108865 bytes"},
		{"meta not JSON", frame([]byte("{"), nil), "its meta"},
		{"meta of unknown fields", frame([]byte(`{"id":"x","extra":1}`), nil), "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m meta
			_, err := Decode(tt.data, &m)
			require.ErrorIs(t, err, ErrFormat)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestDecode_metaBound(t *testing.T) {
	padded := func(size int) []byte { // JSON allows whitespace after the value
		return frame([]byte(metaSample+strings.Repeat(" ", size-len(metaSample))), []byte("P"))
	}
	var m meta
	_, err := Decode(padded(MaxMetaBytes-1), &m)
	require.NoError(t, err, "below")
	_, err = Decode(padded(MaxMetaBytes), &m)
	require.NoError(t, err, "at")
	_, err = Decode(padded(MaxMetaBytes+1), &m)
	require.ErrorContains(t, err, "at most 67108864", "past")
}

func TestEncode_metaBound(t *testing.T) {
	// A JSON string of n bytes marshals to n+2 with its quotes.
	_, err := Encode(strings.Repeat("a", MaxMetaBytes-2), nil)
	require.NoError(t, err, "at")
	_, err = Encode(strings.Repeat("a", MaxMetaBytes-1), nil)
	require.ErrorContains(t, err, "its meta is 67108865 bytes, over 67108864", "past")
}

// FuzzDecode feeds the frame's decoder arbitrary bytes (a store is shared,
// and a file on disk can be anything): it refuses or accepts them, never
// panics or returns more than the input.
func FuzzDecode(f *testing.F) {
	f.Add(frame([]byte(metaSample), []byte("PROGRAM")))
	f.Add(frame([]byte(`{"id":1}`), nil))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m meta
		program, err := Decode(data, &m)
		if err == nil {
			require.LessOrEqual(t, len(program), len(data)-header)
		}
	})
}
