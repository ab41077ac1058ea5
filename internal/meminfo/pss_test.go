package meminfo

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// ParsePss reads the Pss line of smaps_rollup, in bytes, and refuses text
// without one it can read.
func TestParsePss(t *testing.T) {
	const rollup = "55d0c6a00000-7ffd1b3f6000 ---p 00000000 00:00 0 [rollup]\n" +
		"Rss:                1688 kB\nPss:                 329 kB\nPss_Dirty:           112 kB\n"
	tests := []struct {
		name string
		text string
		want int64
		ok   bool
	}{
		{"rollup", rollup, 329 << 10, true},
		{"pss_dirty is not pss", "Pss_Dirty: 112 kB\n", 0, false},
		{"no pss", "Rss: 1688 kB\n", 0, false},
		{"no value", "Pss:\n", 0, false},
		{"not kB", "Pss: 329 MB\n", 0, false},
		{"negative", "Pss: -1 kB\n", 0, false},
		{"not a number", "Pss: many kB\n", 0, false},
		{"largest", "Pss: 9007199254740991 kB\n", 9007199254740991 << 10, true},
		{"past the largest", "Pss: 9007199254740992 kB\n", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePss([]byte(tt.text))
			if !tt.ok {
				require.ErrorIs(t, err, ErrNoPss)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// On Linux the process's Pss is there and positive.
func TestPss(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, err := Pss()
		require.Error(t, err)
		return
	}
	got, err := Pss()
	require.NoError(t, err)
	require.Positive(t, got)
}

func FuzzParsePss(f *testing.F) {
	f.Add([]byte("Pss: 329 kB\n"))
	f.Add([]byte("Pss:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParsePss(b)
		if err == nil && n < 0 {
			t.Fatalf("ParsePss(%q) = %d", b, n)
		}
	})
}
