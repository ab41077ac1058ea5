package bench

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The driver's line decodes to samples, to missing (ErrMissing) or to the
// driver's error; anything else is refused.
func TestDecodeDriver(t *testing.T) {
	tests := []struct {
		name, out string
		want      Raw
		err       string
	}{
		{"samples", "noise\n{\"samples\":[1,2],\"base\":[0.5]}\n", Raw{Samples: []float64{1, 2}, Base: []float64{0.5}}, ""},
		{"note", `{"samples":[3],"note":"snapshot of 4928 KiB"}`, Raw{Samples: []float64{3}, Note: "snapshot of 4928 KiB"}, ""},
		{"missing", `{"missing":"no quickjs-wasi"}`, Raw{}, "missing: no quickjs-wasi"},
		{"unsupported", `{"unsupported":"no snapshots"}`, Raw{}, "missing: unsupported: no snapshots"},
		{"error", `{"error":"wrong answer"}`, Raw{}, "wrong answer"},
		{"nothing", "", Raw{}, "the driver printed nothing"},
		{"no samples", `{"samples":[]}`, Raw{}, "the driver measured no samples"},
		{"unknown field", `{"samples":[1],"bogus":1}`, Raw{}, `unknown field "bogus"`},
		{"not JSON", `samples: 1`, Raw{}, "the driver's line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeDriver([]byte(tt.out))
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.Equal(t, tt.name == "missing" || tt.name == "unsupported", errors.Is(err, ErrMissing))
				require.Equal(t, tt.name == "unsupported", errors.Is(err, ErrUnsupported))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// Whatever a driver prints, decoding it returns samples or an error, never
// a panic, and never an empty success.
func FuzzDecodeDriver(f *testing.F) {
	for _, s := range []string{`{"samples":[1]}`, `{"missing":"x"}`, `{"error":"x"}`, "a\n{\"samples\":[1e400]}", `{"samples":null}`,
		`{"samples":[1],"note":"x"}`, `{"unsupported":"a Worker cannot be captured to bytes"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		raw, err := decodeDriver(out)
		if err == nil {
			require.NotEmpty(t, raw.Samples)
		}
	})
}

// A driver's output is kept up to maxDriverOutput bytes: below and at it
// whole, past it cut there (and the write still reports success, so the
// driver is never blocked).
func TestLimitedBuffer_Write(t *testing.T) {
	for _, n := range []int{maxDriverOutput - 1, maxDriverOutput, maxDriverOutput + 1} {
		var b limitedBuffer
		got, err := b.Write(make([]byte, n))
		require.NoError(t, err)
		require.Equal(t, n, got)
		require.Equal(t, min(n, maxDriverOutput), len(b.Bytes()))
	}
	var b limitedBuffer
	_, _ = b.Write(make([]byte, maxDriverOutput))
	got, err := b.Write([]byte("more"))
	require.NoError(t, err)
	require.Equal(t, 4, got)
	require.Equal(t, maxDriverOutput, len(b.Bytes()))
}
