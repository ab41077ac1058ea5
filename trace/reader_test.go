package trace_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/trace"
)

const minimal = `{"version":1,"id":"a","calls":[{"index":1,"tool":"t","args":{},"ok":true,"completed":1}]}`

func TestReader_Next_maxBytes(t *testing.T) {
	tests := []struct {
		name string
		max  int
		ok   bool
	}{
		{"below the limit", len(minimal) + 1, true},
		{"at the limit", len(minimal), true},
		{"past the limit", len(minimal) - 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trace.NewReader(strings.NewReader(minimal+"\n"+minimal), tt.max)
			for range 2 {
				rec, err := r.Next()
				if !tt.ok {
					require.ErrorIs(t, err, trace.ErrTooLong)
					require.ErrorContains(t, err, "over")
					continue
				}
				require.NoError(t, err)
				require.Equal(t, "a", rec.ID)
			}
			_, err := r.Next()
			require.ErrorIs(t, err, io.EOF)
			require.Equal(t, 2, r.Line())
		})
	}
}

func TestDecode_invalid(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"not JSON", `{`, "not a trace record"},
		{"a later version", `{"version":4}`, "trace version 4: this ptcx reads versions 1 to 3"},
		{"version 0", `{"version":0}`, "trace version 0: this ptcx reads versions 1 to 3"},
		{"no version", `{"id":"a"}`, "trace version 0"},
		{"calls out of order", `{"version":1,"calls":[{"index":2,"tool":"t","args":{},"ok":true,"completed":1}]}`, "call 1 has index 2"},
		{"no tool", `{"version":1,"calls":[{"index":1,"args":{},"ok":true,"completed":1}]}`, "call 1 has no tool"},
		{"rank twice", `{"version":1,"calls":[{"index":1,"tool":"t","args":{},"ok":true,"completed":1},{"index":2,"tool":"t","args":{},"ok":true,"completed":1}]}`, "call 2 has completion rank 1"},
		{"rank past the calls", `{"version":1,"calls":[{"index":1,"tool":"t","args":{},"ok":true,"completed":2}]}`, "ranks must be 1…1"},
		{"failed with no error", `{"version":1,"calls":[{"index":1,"tool":"t","args":{},"completed":1}]}`, "failed with no error"},
		{"failed with a handle", `{"version":3,"calls":[{"index":1,"tool":"t","args":{},"error":{"code":"INTERNAL","message":"m"},"handle":{"id":"h_1","tool":"t","size":1,"labels":{}},"completed":1}]}`,
			"call 1 failed and has a handle"},
		{"passed its own handle", `{"version":3,"calls":[{"index":1,"tool":"t","args":{},"ok":true,"handle":{"id":"h_1","tool":"t","size":1,"labels":{}},"handles":[{"id":"h_1","call":1}],"completed":1}]}`,
			`call 1 was passed handle "h_1" of call 1: want a call before 1`},
		{"passed a value", `{"version":3,"calls":[{"index":1,"tool":"t","args":{},"ok":true,"completed":1},{"index":2,"tool":"t","args":{},"ok":true,"handles":[{"id":"h_1","call":1}],"completed":2}]}`,
			`call 2 was passed handle "h_1" of call 1, which answered with no handle`},
		{"read past the calls", `{"version":3,"calls":[],"reads":[{"handle":"h_1","call":1,"as":"text","labels":{}}]}`,
			`read 1 is of handle "h_1" of call 1: want a call before 1`},
		{"read as what", `{"version":3,"calls":[{"index":1,"tool":"t","args":{},"ok":true,"handle":{"id":"h_1","tool":"t","size":1,"labels":{}},"completed":1}],"reads":[{"handle":"h_1","call":1,"as":"xml","labels":{}}]}`,
			`read 1 of a handle is as "xml": want text or json`},
		{"negative handle size", `{"version":3,"handle_over_bytes":-1}`, "handle_over_bytes -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trace.Decode([]byte(tt.line))
			require.ErrorContains(t, err, tt.want)
		})
	}
	r := trace.NewReader(strings.NewReader("\n"+minimal+"\n{\n"), 0)
	_, err := r.Next()
	require.NoError(t, err)
	_, err = r.Next()
	require.ErrorContains(t, err, "trace line 3: not a trace record")
}

func TestWriter_Write_roundTrip(t *testing.T) {
	var b bytes.Buffer
	w := trace.NewWriter(&b)
	rec, err := trace.Decode([]byte(minimal))
	require.NoError(t, err)
	rec.Text = "<b>&</b>"
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Write(rec))
	require.Contains(t, b.String(), "<b>&</b>", "HTML is not escaped")
	r := trace.NewReader(&b, 0)
	for range 2 {
		got, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, rec.Text, got.Text)
	}
	failing := trace.NewWriter(errWriter{})
	require.ErrorContains(t, failing.Write(rec), "disk full")
	require.ErrorContains(t, failing.Err(), "disk full")
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func FuzzDecode(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(`{"version":1,"calls":[{"index":1,"tool":"t","args":{},"completed":5}]}`))
	f.Add([]byte(`{"version":2,"labels":{"integrity":"untrusted"},"policies":{"t":{"labels":{"confidentiality":"secret"},"accepts":{"integrity":"trusted","args":{"a":{}}},"constraints":["args.a < 1"]}},` +
		`"calls":[{"index":1,"tool":"t","args":{},"ok":false,"error":{"code":"DENIED","message":"m","policy":{"rule":"accepts","tool":"t","label":{"integrity":"untrusted"}}},"labels":{"integrity":"untrusted"},"completed":1}]}`))
	f.Add([]byte(`{"version":3,"handle_over_bytes":10,"calls":[{"index":1,"tool":"t","args":{},"ok":true,"value":"x","raised":{"integrity":"untrusted"},"handle":{"id":"h_1","tool":"t","size":3,"labels":{}},"completed":1},` +
		`{"index":2,"tool":"u","args":{"a":"x"},"ok":true,"handles":[{"id":"h_1","call":1}],"completed":2}],"reads":[{"handle":"h_1","call":1,"as":"json","labels":{}},{"handle":"h_0","call":0,"as":"text","labels":{}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := trace.Decode(b)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for i, c := range rec.Calls {
			if c.Index != i+1 || c.Completed < 1 || c.Completed > len(rec.Calls) || seen[c.Completed] {
				t.Fatalf("Decode accepted call %d: %+v", i, c)
			}
			seen[c.Completed] = true
			if c.Handle != nil && !c.OK {
				t.Fatalf("Decode accepted failed call %d with a handle", i+1)
			}
			for _, p := range c.Handles {
				if p.Call < 0 || p.Call >= c.Index || (p.Call > 0 && rec.Calls[p.Call-1].Handle == nil) {
					t.Fatalf("Decode accepted call %d passed a handle of call %d", i+1, p.Call)
				}
			}
		}
		for k, r := range rec.Reads {
			if r.Call < 0 || r.Call > len(rec.Calls) || (r.Call > 0 && rec.Calls[r.Call-1].Handle == nil) {
				t.Fatalf("Decode accepted read %d of call %d", k+1, r.Call)
			}
		}
	})
}
