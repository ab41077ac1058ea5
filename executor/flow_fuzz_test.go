package executor_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// FuzzUnframeSessionLabel: a session store's bytes (which another process,
// or a corrupted store, may have written) never panic the reader; what it
// accepts is a valid label and the bytes after the frame, and framing them
// again gives the same bytes back (the lowest label frames nothing).
func FuzzUnframeSessionLabel(f *testing.F) {
	f.Add([]byte("PTCXFLOW\x01\x01\x02state"))
	f.Add([]byte("PTCXFLOW\x01"))
	f.Add([]byte("PTCXFLOW\x02\x00\x00"))
	f.Add([]byte("PTCXFLOW\x01\x09\x00"))
	f.Add([]byte("plain session bytes"))
	f.Fuzz(func(t *testing.T, b []byte) {
		state, l, err := executor.UnframeSessionLabel(b)
		if err != nil {
			return
		}
		require.True(t, l.Valid())
		back := executor.FrameSessionLabel(l, state)
		if l.IsZero() && bytes.HasPrefix(b, []byte("PTCXFLOW")) {
			return // a frame of the lowest label is read, never written
		}
		require.Equal(t, b, back)
	})
}

func TestUnframeSessionLabel_refusesWhatItCannotRead(t *testing.T) {
	for _, b := range []string{"PTCXFLOW", "PTCXFLOW\x01\x01", "PTCXFLOW\x02\x00\x00x", "PTCXFLOW\x01\x02\x00", "PTCXFLOW\x01\x00\x03"} {
		_, _, err := executor.UnframeSessionLabel([]byte(b))
		require.Error(t, err, "%q", b)
	}
	state, l, err := executor.UnframeSessionLabel(executor.FrameSessionLabel(api.Top, []byte("s")))
	require.NoError(t, err)
	require.Equal(t, api.Top, l)
	require.Equal(t, "s", string(state))
	require.Equal(t, "s", string(executor.FrameSessionLabel(api.Label{}, []byte("s"))), "the lowest label adds no frame")
}
