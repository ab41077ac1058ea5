package wasmhost

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
)

// syntheticSession returns an image and a session's bytes (and their
// inflated body) made from it, without a guest.
func syntheticSession(t testing.TB) (*image, []byte, []byte) {
	img := &image{memory: make([]byte, 2*abi.PageSize), globals: []string{"__stack_pointer"}}
	for i := range img.memory {
		img.memory[i] = byte(i * 7)
	}
	img.moduleHash = sha256.Sum256([]byte("a guest"))
	img.memoryHash = sha256.Sum256(img.memory)
	mem := make([]byte, 3*abi.PageSize)
	copy(mem, img.memory)
	mem[10], mem[abi.PageSize+5000], mem[2*abi.PageSize+100] = 1, 2, 3
	b, err := snapshot.EncodeSession(img.base(), mem, []uint64{65536}, 1024, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	body, err := dec.DecodeAll(b[snapshot.SessionHeaderSize:], nil)
	require.NoError(t, err)
	return img, b, body
}

func TestDecodeSession_roundTrip(t *testing.T) {
	img, b, _ := syntheticSession(t)
	st, err := snapshot.DecodeSession(img.base(), 1<<20, b)
	require.NoError(t, err)
	require.Equal(t, []uint64{65536}, st.Globals)
	require.Equal(t, uint32(1024), st.BufPtr)
	require.Equal(t, uint32(64), st.BufCap)
	require.Equal(t, uint32(3), st.Pages)
	require.Equal(t, []uint32{0, 17, 32}, st.Blocks) // the three blocks changed
	require.Len(t, st.Data, 3*snapshot.BlockSize)
}

func TestDecodeSession_refuses(t *testing.T) {
	img, b, _ := syntheticSession(t)
	other := *img
	other.moduleHash[0]++
	mutate := func(at int, v byte) []byte {
		c := append([]byte(nil), b...)
		c[at] = v
		return c
	}
	for _, tc := range []struct {
		name   string
		img    *image
		memory int64
		b      []byte
		want   string
	}{
		{"not a session", img, 1 << 20, []byte("PTCXSNAP and more bytes than a header holds, and then some more"), "not a ptcx session"},
		{"short", img, 1 << 20, b[:10], "not a ptcx session"},
		{"format", img, 1 << 20, mutate(len(snapshot.SessionMagic), 9), "format version 9"},
		{"abi", img, 1 << 20, mutate(len(snapshot.SessionMagic)+2, 9), "guest ABI version 9"},
		{"another guest", &other, 1 << 20, b, "another guest"},
		{"over the memory limit", img, 2 * abi.PageSize, b, "over"},
		{"cut", img, 1 << 20, b[:len(b)-3], "inflate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := snapshot.DecodeSession(tc.img.base(), tc.memory, tc.b)
			require.ErrorIs(t, err, ErrSessionBytes)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func requireSessionConsistent(t *testing.T, img *image, memoryBytes int64, st *snapshot.Session) {
	require.Len(t, st.Globals, len(img.globals))
	require.Len(t, st.Data, len(st.Blocks)*snapshot.BlockSize)
	require.LessOrEqual(t, int64(st.Pages)*abi.PageSize, memoryBytes)
	require.GreaterOrEqual(t, int(st.Pages)*abi.PageSize, len(img.memory))
	require.LessOrEqual(t, int64(st.BufPtr)+int64(st.BufCap), int64(st.Pages)*abi.PageSize)
	for i, b := range st.Blocks {
		require.Less(t, int64(b), int64(st.Pages)*abi.PageSize/snapshot.BlockSize)
		if i > 0 {
			require.Less(t, st.Blocks[i-1], b)
		}
	}
}

// FuzzDecodeSession feeds the decoder arbitrary bytes and mutated ones: it
// refuses or accepts, never panics, and what it accepts is consistent.
func FuzzDecodeSession(f *testing.F) {
	img, b, _ := syntheticSession(f)
	f.Add(b)
	f.Add(b[:snapshot.SessionHeaderSize])
	f.Add([]byte(snapshot.SessionMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := snapshot.DecodeSession(img.base(), 1<<20, b)
		if err != nil {
			require.ErrorIs(t, err, ErrSessionBytes)
			return
		}
		requireSessionConsistent(t, img, 1<<20, st)
	})
}

// FuzzParseSessionBody does the same past the compression.
func FuzzParseSessionBody(f *testing.F) {
	img, _, body := syntheticSession(f)
	f.Add(false, body)
	f.Add(false, body[:30])
	withFiles := sessionFilesBody(f, `[{"fd":4,"path":"python313.zip","offset":2}]`, body)
	f.Add(true, withFiles)
	f.Add(true, withFiles[:20])
	f.Add(true, body)
	f.Fuzz(func(t *testing.T, files bool, b []byte) {
		st, err := snapshot.ParseSessionBody(img.base(), 1<<20, files, b)
		if err != nil {
			require.ErrorIs(t, err, ErrSessionBytes)
			return
		}
		requireSessionConsistent(t, img, 1<<20, st)
		require.LessOrEqual(t, len(st.Files), wasifs.MaxOpen)
		require.True(t, files || st.Files == nil, "a format 1 body has no open files")
	})
}

// sessionFilesBody is a format 2 body: the JSON of open files, then body.
func sessionFilesBody(tb testing.TB, files string, body []byte) []byte {
	tb.Helper()
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(files)))
	return append(append(b, files...), body...)
}

// A session whose guest has files open is format 2 and carries them; one
// without is format 1, which hosts before format 2 read. Bad open files
// are refused with ErrSessionBytes.
func TestSessionBytes_files(t *testing.T) {
	img, _, body := syntheticSession(t)
	mem := make([]byte, 2*abi.PageSize)
	copy(mem, img.memory)
	mem[10] = 1 // a block that differs: a body of under 256 bytes declares no content size (zstd)
	files := []wasifs.File{{FD: 4, Path: "python313.zip", Offset: 2}, {FD: 6, Path: ".", Dir: true}}
	b, err := snapshot.EncodeSession(img.base(), mem, []uint64{65536}, 1024, 64, files)
	require.NoError(t, err)
	require.Equal(t, uint16(2), binary.LittleEndian.Uint16(b[len(snapshot.SessionMagic):]))
	st, err := snapshot.DecodeSession(img.base(), 1<<20, b)
	require.NoError(t, err)
	require.Equal(t, files, st.Files)

	none, err := snapshot.EncodeSession(img.base(), mem, []uint64{65536}, 1024, 64, nil)
	require.NoError(t, err)
	require.Equal(t, uint16(1), binary.LittleEndian.Uint16(none[len(snapshot.SessionMagic):]))

	_, err = snapshot.EncodeSession(img.base(), mem, []uint64{65536}, 1024, 64, make([]wasifs.File, wasifs.MaxOpen+1))
	require.ErrorContains(t, err, "open files, over the limit")

	for name, js := range map[string]string{
		"not JSON":      `[{"fd":4`,
		"no file":       `[]`,
		"unknown field": `[{"fd":4,"path":"a","mode":7}]`,
		"two values":    `[{"fd":4,"path":"a"}] []`,
		"too many":      "[" + strings.Repeat(`{"fd":4,"path":"a"},`, wasifs.MaxOpen) + `{"fd":4,"path":"a"}]`,
	} {
		_, err := snapshot.ParseSessionBody(img.base(), 1<<20, true, sessionFilesBody(t, js, body))
		require.ErrorIs(t, err, ErrSessionBytes, name)
	}
	long := binary.LittleEndian.AppendUint32(nil, 1<<30)
	_, err = snapshot.ParseSessionBody(img.base(), 1<<20, true, append(long, body...))
	require.ErrorIs(t, err, ErrSessionBytes, "a length past the body")
}
