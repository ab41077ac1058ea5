package serve

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/internal/parkfile"
)

const parkMetaSample = `{"id":"ex_1","tenant":"a","spec":{"client_tools":[]},"created":"2026-01-01T00:00:00Z","sum":null,` +
	`"calls":[],"call_count":0,"events":0,"pending":[{"call":{"id":"ex_1:ptc:1","name":"ask","arguments":{}},"expires":"2026-01-01T00:00:00Z","park_id":1}]}`

// frame puts meta and program into the park file's format.
func frame(meta, program []byte) []byte {
	out := append([]byte(parkfile.Magic), 0, 0, 0, parkfile.Version)
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

	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"another format", []byte("PTCXPARK and more bytes"), "does not start with"},
		{"meta of unknown fields", frame([]byte(`{"id":"x","tenant":"a","extra":1}`), nil), "unknown field"},
		{"meta without pending calls", frame([]byte(`{"id":"x","tenant":"a"}`), nil), "no pending call"},
		{"meta without an id", frame([]byte(`{"tenant":"a"}`), nil), "no execution or tenant"},
		{"meta with a negative count", frame([]byte(`{"id":"x","tenant":"a","call_count":-1,"pending":[{}]}`), nil), "negative count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeParkFile(tt.data)
			require.ErrorIs(t, err, parkfile.ErrFormat)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// FuzzDecodeParkFile feeds the store's parked-execution decoder arbitrary
// bytes (a store is shared, and a file on disk can be anything): it
// refuses or accepts them, never panics or allocates past the input.
func FuzzDecodeParkFile(f *testing.F) {
	f.Add(frame([]byte(parkMetaSample), []byte("PROGRAM")))
	f.Add(frame([]byte(`{"id":"x","tenant":"a","pending":[{}]}`), nil))
	f.Add([]byte(parkfile.Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := decodeParkFile(data)
		if err == nil {
			require.NotEmpty(t, pf.meta.ID)
			require.NotEmpty(t, pf.meta.Pending)
			require.LessOrEqual(t, len(pf.program), len(data))
		}
	})
}
