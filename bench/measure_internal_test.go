package bench

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// On Linux the process's Pss is there and positive; elsewhere the
// workload is missing, never measured another way.
func TestResidentBytes(t *testing.T) {
	got, err := residentBytes()
	if runtime.GOOS != "linux" {
		require.ErrorIs(t, err, ErrMissing)
		return
	}
	require.NoError(t, err)
	require.Positive(t, got)
}
