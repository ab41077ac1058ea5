package wasmhost

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
)

// tableInstance is an instance whose file table is t.
type tableInstance struct {
	engine.Instance
	t *wasifs.Table
}

func (i tableInstance) Files() []wasifs.File                   { return i.t.Files() }
func (i tableInstance) ResetFiles()                            { i.t.Reset() }
func (i tableInstance) RestoreFiles(files []wasifs.File) error { return i.t.Restore(files) }

// A snapshot's open files are opened again as the run resumes, and a
// snapshot naming one the guest's file system cannot have open is refused
// (ErrSnapshot), saying which.
func TestRestoreFiles(t *testing.T) {
	fsys := fstest.MapFS{"python313.zip": {Data: []byte("PK\x03\x04...")}, "dir/x": {}}
	ok := []wasifs.File{{FD: 4, Path: "python313.zip", Offset: 7}, {FD: 9, Path: "dir", Dir: true}}
	inst := tableInstance{t: wasifs.New(fsys, "/usr/local/lib")}
	require.NoError(t, restoreFiles(inst, ok))
	require.Equal(t, ok, inst.Files())
	require.NoError(t, restoreFiles(inst, nil))
	require.Empty(t, inst.Files(), "an old snapshot, without files: none open")
	for _, tc := range []struct {
		name  string
		files []wasifs.File
		msg   string
	}{
		{"missing file", []wasifs.File{{FD: 4, Path: "python312.zip"}}, `fd 4, "python312.zip"`},
		{"bad fd", []wasifs.File{{FD: 2, Path: "python313.zip"}}, "not a guest file's"},
		{"fd past the table", []wasifs.File{{FD: 4 + wasifs.MaxOpen, Path: "python313.zip"}}, "not a guest file's"},
		{"offset past the end", []wasifs.File{{FD: 4, Path: "python313.zip", Offset: 8}}, "offset 8 is outside the file (7 bytes)"},
		{"escape", []wasifs.File{{FD: 4, Path: "../etc/passwd"}}, "not a clean path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := restoreFiles(inst, tc.files)
			require.True(t, errors.Is(err, ErrSnapshot), "%v", err)
			require.ErrorContains(t, err, tc.msg)
			require.Empty(t, inst.Files())
		})
	}
	err := restoreFiles(struct{ engine.Instance }{}, ok)
	require.True(t, errors.Is(err, ErrSnapshot), "%v", err)
	require.ErrorContains(t, err, "no file table")
	require.NoError(t, restoreFiles(struct{ engine.Instance }{}, nil), "no files: any engine")
}
