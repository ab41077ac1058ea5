package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func sessionFileSample(t testing.TB, state []byte) (sessionMeta, []byte) {
	key := sessionKeyOf("a", "", "chat")
	obj := sessionObjectName(key, state)
	sum := sha256.Sum256(state)
	m := sessionMeta{Tenant: "a", Name: "chat", Object: obj, SHA256: hex.EncodeToString(sum[:])}
	data, err := encodeSessionFile(m, state)
	require.NoError(t, err)
	return m, data
}

// TestSessionObjectSum: only a name of the session's own form is its
// own.
func TestSessionObjectSum(t *testing.T) {
	key, other := sessionKeyOf("a", "", "chat"), sessionKeyOf("b", "", "chat")
	name := sessionObjectName(key, []byte("state"))
	sum, ok := sessionObjectSum(key, name)
	require.True(t, ok)
	require.Equal(t, snapshotSum([]byte("state")), sum)
	for _, bad := range []string{
		sessionObjectName(other, []byte("state")),        // another session's
		"ss_0123456789abcdef0123456789ab",                // written before sessions were bound
		"ss_" + key,                                      // no R.SUM
		"ss_" + key + ".0123456789ab",                    // no SUM
		"ss_" + key + ".0123456789ab.0123456789abcdeg",   // SUM not hex
		"ss_" + key + ".0123456789a.0123456789abcdef",    // R too short
		"ss_" + key + ".0123456789ab.0123456789abcdef.x", // more
		"ss_" + key + "0.0123456789ab.0123456789abcdef",  // a longer key
		"ex_" + strings.TrimPrefix(name, "ss_"),          // not a session's
	} {
		_, ok := sessionObjectSum(key, bad)
		require.False(t, ok, bad)
	}
}

// TestDecodeSessionFile_roundTrip: what encodeSessionFile writes decodes
// to its meta and state, which is a slice of the input, and belongs to
// its session under its name only.
func TestDecodeSessionFile_roundTrip(t *testing.T) {
	state := []byte("the state")
	m, data := sessionFileSample(t, state)
	got, st, err := decodeSessionFile(data)
	require.NoError(t, err)
	require.Equal(t, m, got)
	require.Equal(t, state, st)
	require.NoError(t, got.belongsTo("a", "", "chat", m.Object))
	require.ErrorContains(t, got.belongsTo("b", "", "chat", m.Object), "another session's state")
	require.ErrorContains(t, got.belongsTo("a", "s", "chat", m.Object), "another session's state")
	require.ErrorContains(t, got.belongsTo("a", "", "chat2", m.Object), "another session's state")
	require.ErrorContains(t, got.belongsTo("a", "", "chat", m.Object+"x"), "written under another name")
}

// TestDecodeSessionFile_metaBound: the meta is at most
// sessionFileOverhead-16 bytes (below, at, above), so a state within
// MaxSessionStateBytes fits a store's snapshot.
func TestDecodeSessionFile_metaBound(t *testing.T) {
	state := []byte("s")
	_, data := sessionFileSample(t, state)
	meta := data[16 : len(data)-len(state)]
	padded := func(size int) []byte { // JSON allows whitespace after the value
		mb := append(append([]byte(nil), meta...), bytes.Repeat([]byte(" "), size-len(meta))...)
		out := append([]byte(sessionFileMagic), 0, 0, 0, sessionFileVersion)
		out = binary.BigEndian.AppendUint32(out, uint32(len(mb)))
		return append(append(out, mb...), state...)
	}
	limit := sessionFileOverhead - 16
	_, _, err := decodeSessionFile(padded(limit - 1))
	require.NoError(t, err, "below")
	_, _, err = decodeSessionFile(padded(limit))
	require.NoError(t, err, "at")
	_, _, err = decodeSessionFile(padded(limit + 1))
	require.ErrorContains(t, err, "at most 4080", "above")
	_, err = encodeSessionFile(sessionMeta{Tenant: strings.Repeat("t", limit)}, state)
	require.ErrorContains(t, err, "over 4080")
}

// FuzzDecodeSessionFile feeds the decoder of a session's saved state
// arbitrary bytes (a store is shared, and a file on disk can be
// anything): it refuses them, or returns a meta whose checksum is its
// state's and which encodes back to what decodes the same; it never
// panics or allocates past the input.
func FuzzDecodeSessionFile(f *testing.F) {
	_, data := sessionFileSample(f, []byte("STATE"))
	f.Add(data)
	_, data = sessionFileSample(f, nil)
	f.Add(data)
	f.Add([]byte(sessionFileMagic))
	f.Add(append([]byte(sessionFileMagic), 0, 0, 0, 1, 0, 0, 0, 2, '{', '}'))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, state, err := decodeSessionFile(data)
		if err != nil {
			require.ErrorIs(t, err, errSessionFile)
			return
		}
		require.LessOrEqual(t, len(state), len(data))
		sum := sha256.Sum256(state)
		require.Equal(t, hex.EncodeToString(sum[:]), m.SHA256)
		again, err := encodeSessionFile(m, state)
		require.NoError(t, err)
		m2, state2, err := decodeSessionFile(again)
		require.NoError(t, err)
		require.Equal(t, m, m2)
		require.Equal(t, state, state2)
	})
}

// FuzzTooDeep: on any valid JSON, tooDeep agrees with encoding/json's
// own reading of the nesting.
func FuzzTooDeep(f *testing.F) {
	for _, s := range []string{`1`, `[[[]]]`, `{"a":[{"[":"]\"["}]}`, `"\\"`, `[{}, [[], {"x": [1]}]]`} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if !json.Valid(data) || limit < 0 || limit > 64 {
			return
		}
		d := json.NewDecoder(bytes.NewReader(data))
		depth, deepest := 0, 0
		for {
			tok, err := d.Token()
			if err != nil {
				break
			}
			switch tok {
			case json.Delim('['), json.Delim('{'):
				depth++
				deepest = max(deepest, depth)
			case json.Delim(']'), json.Delim('}'):
				depth--
			}
		}
		_, deep := tooDeep(data, limit)
		require.Equal(t, deepest > limit, deep)
	})
}
