package executor_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

const (
	frameRef = "0123456789abcdef0123456789abcdef"
	frameID  = "h_0123456789abcdef0123456789abcdef"
)

// handlesFrame is a version 2 frame of label top holding the handles'
// JSON hs, then the state.
func handlesFrame(hs, state string) []byte {
	b := []byte("PTCXFLOW\x02\x01\x02")
	b = binary.BigEndian.AppendUint32(b, uint32(len(hs)))
	return append(append(b, hs...), state...)
}

const oneHandle = `[{"ref":"` + frameRef + `","id":"` + frameID + `","tool":"doc","labels":{"integrity":"untrusted","confidentiality":"private"},"value":"v"}]`

// FuzzUnframeSession: a session store's bytes (which another process, or
// a corrupted store, may have written) never panic the reader; what it
// accepts is a valid label, handles any session could hold, and the bytes
// after the frame; framing them again reads back the same, and a frame
// without handles gives the same bytes back (the lowest label frames
// nothing).
func FuzzUnframeSession(f *testing.F) {
	f.Add([]byte("PTCXFLOW\x01\x01\x02state"))
	f.Add([]byte("PTCXFLOW\x01"))
	f.Add([]byte("PTCXFLOW\x02\x00\x00"))
	f.Add([]byte("PTCXFLOW\x01\x09\x00"))
	f.Add([]byte("plain session bytes"))
	f.Add(handlesFrame(oneHandle, "state"))
	f.Add(handlesFrame(`[]`, "state"))
	f.Add(handlesFrame(oneHandle[:len(oneHandle)-1]+`,`+oneHandle[1:], "state"))
	f.Add(handlesFrame(oneHandle, "")[:20])
	f.Add([]byte("PTCXFLOW\x03\x01\x02\x06python\x00\x00\x00\x00state"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, state, err := executor.UnframeSession(b)
		if err != nil {
			require.Nil(t, state)
			return
		}
		require.True(t, fr.Label.Valid())
		require.NoError(t, executor.CheckSessionHandles(fr.Handles))
		back := executor.FrameSession(fr, state)
		again, againState, err := executor.UnframeSession(back)
		require.NoError(t, err)
		require.Equal(t, fr, again)
		require.Equal(t, state, againState)
		if len(fr.Handles) > 0 || (fr.Label.IsZero() && bytes.HasPrefix(b, []byte("PTCXFLOW"))) {
			return // handles' JSON is written one way, read in many; a frame of the lowest label is read, never written
		}
		require.Equal(t, b, back)
	})
}

func TestUnframeSession_refusesWhatItCannotRead(t *testing.T) {
	dup := oneHandle[:len(oneHandle)-1] + `,` + oneHandle[1:]
	for name, b := range map[string][]byte{
		"magic alone":               []byte("PTCXFLOW"),
		"no confidentiality":        []byte("PTCXFLOW\x01\x01"),
		"an unknown version":        []byte("PTCXFLOW\x04\x00\x00x"),
		"an integrity out of range": []byte("PTCXFLOW\x01\x02\x00"),
		"a secrecy out of range":    []byte("PTCXFLOW\x01\x00\x03"),
		"no handles' length":        []byte("PTCXFLOW\x02\x00\x00\x00\x00"),
		"handles past the end":      handlesFrame(oneHandle, "")[:30],
		"handles not JSON":          handlesFrame(`[{`, "s"),
		"handles not a list":        handlesFrame(`{}`, "s"),
		"no handles":                handlesFrame(`[]`, "s"),
		"null handles":              handlesFrame(`null`, "s"),
		"an unknown member":         handlesFrame(`[{"ref":"`+frameRef+`","id":"`+frameID+`","tool":"doc","labels":{"integrity":"trusted","confidentiality":"public"},"value":1,"x":1}]`, "s"),
		"a bad label":               handlesFrame(`[{"ref":"`+frameRef+`","id":"`+frameID+`","tool":"doc","labels":{"integrity":"sure","confidentiality":"public"},"value":1}]`, "s"),
		"a value not JSON":          handlesFrame(`[{"ref":"`+frameRef+`","id":"`+frameID+`","tool":"doc","labels":{"integrity":"trusted","confidentiality":"public"},"value":"}]`, "s"),
		"a short ref":               handlesFrame(`[{"ref":"0123","id":"`+frameID+`","tool":"doc","labels":{"integrity":"trusted","confidentiality":"public"},"value":1}]`, "s"),
		"no tool":                   handlesFrame(`[{"ref":"`+frameRef+`","id":"`+frameID+`","labels":{"integrity":"trusted","confidentiality":"public"},"value":1}]`, "s"),
		"a ref twice":               handlesFrame(dup, "s"),
		"two lists":                 handlesFrame(oneHandle+oneHandle, "s"),
		"a stray bracket":           handlesFrame(oneHandle+`]`, "s"),
		"version 3, no language":    []byte("PTCXFLOW\x03\x00\x00"),
		"version 3, cut language":   []byte("PTCXFLOW\x03\x00\x00\x06pyt"),
		"version 3, typescript":     []byte("PTCXFLOW\x03\x00\x00\x0atypescript\x00\x00\x00\x00s"),
		"version 3, unknown":        []byte("PTCXFLOW\x03\x00\x00\x05cobol\x00\x00\x00\x00s"),
		"version 3, no handles len": []byte("PTCXFLOW\x03\x00\x00\x06python\x00"),
	} {
		_, state, err := executor.UnframeSession(b)
		require.Error(t, err, "%s: %q", name, b)
		require.Nil(t, state, name)
	}

	fr, state, err := executor.UnframeSession(executor.FrameSession(executor.SessionFrame{Label: api.Top}, []byte("s")))
	require.NoError(t, err)
	require.Equal(t, executor.SessionFrame{Label: api.Top, Language: api.LanguageTypeScript}, fr)
	require.Equal(t, "s", string(state))
	require.Equal(t, "s", string(executor.FrameSession(executor.SessionFrame{}, []byte("s"))), "the lowest label and no handle add no frame")
	require.Equal(t, byte(1), executor.FrameSession(executor.SessionFrame{Label: api.Top}, []byte("s"))[8], "without handles: version 1, which older executors read")

	py := executor.FrameSession(executor.SessionFrame{Language: api.LanguagePython}, []byte("s"))
	require.Equal(t, "PTCXFLOW\x03\x00\x00\x06python\x00\x00\x00\x00s", string(py), "a Python session: version 3, even at the lowest label")
	fr, state, err = executor.UnframeSession(py)
	require.NoError(t, err)
	require.Equal(t, executor.SessionFrame{Language: api.LanguagePython}, fr)
	require.Equal(t, "s", string(state))
	fr, _, err = executor.UnframeSession([]byte("s"))
	require.NoError(t, err)
	require.Equal(t, api.LanguageTypeScript, fr.Language, "bytes without a frame are a TypeScript session's")

	fr, state, err = executor.UnframeSession(handlesFrame(oneHandle, "state"))
	require.NoError(t, err)
	require.Equal(t, "state", string(state))
	require.Len(t, fr.Handles, 1)
	require.Equal(t, private, fr.Handles[0].Labels)
	require.Equal(t, `"v"`, string(fr.Handles[0].Value))

	// Over the bounds of a session's handles.
	defer executor.SetHandleBounds(1, 2)()
	_, _, err = executor.UnframeSession(handlesFrame(oneHandle, "state"))
	require.ErrorContains(t, err, "its handles hold 3 bytes, over the 2 a session's may")
	two := `[{"ref":"` + frameRef + `","id":"` + frameID + `","tool":"doc","labels":{"integrity":"trusted","confidentiality":"public"},"value":1},` +
		`{"ref":"` + frameRef[:31] + `0","id":"` + frameID[:33] + `0","tool":"doc","labels":{"integrity":"trusted","confidentiality":"public"},"value":2}]`
	_, _, err = executor.UnframeSession(handlesFrame(two, "state"))
	require.ErrorContains(t, err, "it holds 2 handles, over the 1 a session may")
}
