package engine

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// Every build's wazero mounts a file system; an engine registers its
// FSFactory once, and a name without one has none.
func TestLookupFS(t *testing.T) {
	_, ok := LookupFS(Wazero)
	require.True(t, ok, "wazero mounts a file system")
	_, ok = LookupFS("no such engine")
	require.False(t, ok)

	const name = "test engine with a file system"
	var got fs.FS
	f := func(fsys fs.FS, _ string) Factory {
		got = fsys
		return newWazero
	}
	RegisterFS(name, f)
	lookedUp, ok := LookupFS(name)
	require.True(t, ok)
	fsys := fstest.MapFS{}
	_ = lookedUp(fsys, "/mnt")
	require.Equal(t, fs.FS(fsys), got)
	require.PanicsWithValue(t, "engine: "+name+"'s file system registered twice", func() { RegisterFS(name, f) })
}
