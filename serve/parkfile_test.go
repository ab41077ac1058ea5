package serve

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const parkMetaSample = `{"id":"ex_1","tenant":"a","spec":{"client_tools":[]},"created":"2026-01-01T00:00:00Z","sum":null,` +
	`"calls":[],"call_count":0,"events":0,"pending":[{"call":{"id":"ex_1:ptc:1","name":"ask","arguments":{}},"expires":"2026-01-01T00:00:00Z","park_id":1}]}`

// frame puts meta and program into the park file's format.
func frame(meta, program []byte) []byte {
	out := append([]byte(parkFileMagic), 0, 0, 0, parkFileVersion)
	out = binary.BigEndian.AppendUint32(out, uint32(len(meta)))
	return append(append(out, meta...), program...)
}

func TestDecodeParkFile(t *testing.T) {
	good := frame([]byte(parkMetaSample), []byte("PROGRAM"))
	pf, err := decodeParkFile(good)
	require.NoError(t, err)
	require.Equal(t, "ex_1", pf.meta.ID)
	require.Equal(t, int32(1), pf.meta.Pending[0].ParkID)
	require.Equal(t, []byte("PROGRAM"), pf.program)

	v2 := bytes.Clone(good)
	v2[11] = 2
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "does not start with"},
		{"another format", []byte("PTCXPARK and more bytes"), "does not start with"},
		{"another version", v2, "version 2"},
		{"meta past the input", frame([]byte(parkMetaSample), nil)[:40], "its meta claims"},
		{"meta over its bound", func() []byte {
			b := frame(nil, nil)
			binary.BigEndian.PutUint32(b[12:], maxParkMetaBytes+1)
			return append(b, make([]byte, 64)...)
		}(), "its meta claims 67108865 bytes"},
		{"meta not JSON", frame([]byte("{"), nil), "its meta"},
		{"meta of unknown fields", frame([]byte(`{"id":"x","tenant":"a","extra":1}`), nil), "unknown field"},
		{"meta without pending calls", frame([]byte(`{"id":"x","tenant":"a"}`), nil), "no pending call"},
		{"meta without an id", frame([]byte(`{"tenant":"a"}`), nil), "no execution or tenant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeParkFile(tt.data)
			require.ErrorIs(t, err, errParkFile)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestDecodeParkFile_metaBound(t *testing.T) {
	padded := func(size int) []byte { // JSON allows whitespace after the value
		return frame([]byte(parkMetaSample+strings.Repeat(" ", size-len(parkMetaSample))), []byte("P"))
	}
	_, err := decodeParkFile(padded(maxParkMetaBytes - 1))
	require.NoError(t, err, "below")
	_, err = decodeParkFile(padded(maxParkMetaBytes))
	require.NoError(t, err, "at")
	_, err = decodeParkFile(padded(maxParkMetaBytes + 1))
	require.ErrorContains(t, err, "at most 67108864", "past")
}

// FuzzDecodeParkFile feeds the store's parked-execution decoder arbitrary
// bytes (a store is shared, and a file on disk can be anything): it
// refuses or accepts them, never panics or allocates past the input.
func FuzzDecodeParkFile(f *testing.F) {
	f.Add(frame([]byte(parkMetaSample), []byte("PROGRAM")))
	f.Add(frame([]byte(`{"id":"x","tenant":"a","pending":[{}]}`), nil))
	f.Add([]byte(parkFileMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := decodeParkFile(data)
		if err == nil {
			require.NotEmpty(t, pf.meta.ID)
			require.NotEmpty(t, pf.meta.Pending)
			require.LessOrEqual(t, len(pf.program), len(data))
		}
	})
}
