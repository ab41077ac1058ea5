package snapshot

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
)

// filesOfSize returns one open file whose JSON list is exactly n bytes.
func filesOfSize(t *testing.T, n int) ([]wasifs.File, []byte) {
	t.Helper()
	files := []wasifs.File{{FD: 3, Path: ""}}
	empty, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	files[0].Path = strings.Repeat("a", n-len(empty))
	js, err := json.Marshal(files)
	if err != nil || len(js) != n {
		t.Fatalf("the files' JSON is %d bytes, want %d (%v)", len(js), n, err)
	}
	return files, js
}

// A session's open files are read up to maxSessionFilesBytes of JSON: at
// the bound the list is read (and the body goes on to its globals), one
// byte over it is refused before any is decoded, and EncodeSession will
// not write a list over it.
func TestParseSessionBody_filesAtTheirBound(t *testing.T) {
	img := &Base{}
	body := func(js []byte, declared int) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(declared))
		return append(b, js...)
	}

	_, at := filesOfSize(t, maxSessionFilesBytes)
	_, err := ParseSessionBody(img, 1<<20, true, body(at, len(at)))
	if err == nil || strings.Contains(err.Error(), "open files") || !strings.Contains(err.Error(), "globals") {
		t.Fatalf("at the bound: %v, want the files read and the globals refused", err)
	}

	_, below := filesOfSize(t, maxSessionFilesBytes-1)
	_, err = ParseSessionBody(img, 1<<20, true, body(below, len(below)))
	if err == nil || strings.Contains(err.Error(), "open files") {
		t.Fatalf("below the bound: %v, want the files read", err)
	}

	over := append(at, ' ')
	_, err = ParseSessionBody(img, 1<<20, true, body(over, len(over)))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over the %d they may", maxSessionFilesBytes)) {
		t.Fatalf("over the bound: %v, want it refused", err)
	}

	files, _ := filesOfSize(t, maxSessionFilesBytes+1)
	if _, err := EncodeSession(img, nil, nil, 0, 0, files); err == nil || !strings.Contains(err.Error(), "cannot be encoded") {
		t.Fatalf("encoding a list over the bound: %v, want it refused", err)
	}
}
