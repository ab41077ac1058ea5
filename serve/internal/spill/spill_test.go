package spill

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/store"
)

func TestSpill_PutGetRemove(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "made")
	sp, err := Open(parent, 5*time.Second)
	require.NoError(t, err)
	info, err := os.Stat(parent)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the parent is made private")
	require.Equal(t, parent, filepath.Dir(sp.Root()))

	require.NoError(t, sp.Put("ex_1.a.b", []byte("parked")))
	got, err := sp.Get(context.Background(), "ex_1.a.b")
	require.NoError(t, err)
	require.Equal(t, []byte("parked"), got)
	_, err = sp.Get(context.Background(), "ex_1.a.b")
	require.NoError(t, err, "reading leaves the bytes")

	require.NoError(t, sp.Remove("ex_1.a.b"))
	_, err = sp.Get(context.Background(), "ex_1.a.b")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorContains(t, err, "reading its spilled snapshot ex_1.a.b from "+sp.Root())
	require.NoError(t, sp.Remove("ex_1.a.b"), "removing what is gone is no error")

	require.NoError(t, sp.Close())
	_, err = os.Stat(sp.Root())
	require.ErrorIs(t, err, os.ErrNotExist, "Close removes the directory")
}

// Two spills under one parent are two directories: a process's own.
func TestSpill_Open_eachItsOwn(t *testing.T) {
	parent := t.TempDir()
	a, err := Open(parent, time.Second)
	require.NoError(t, err)
	b, err := Open(parent, time.Second)
	require.NoError(t, err)
	require.NotEqual(t, a.Root(), b.Root())
	require.NoError(t, a.Put("x", []byte("a's")))
	_, err = b.Get(context.Background(), "x")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestSpill_Open_badParent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := Open(filepath.Join(file, "under"), time.Second)
	require.ErrorContains(t, err, "field spill_dir: mkdir "+file+": not a directory")
}

func TestDefaultParent_underTheUserCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	p, err := DefaultParent()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(cache, "ptcx", "spill"), p)
}

// TestSpill_hammer writes, reads and removes from many goroutines at once
// (run it under -race): each reads back its own bytes.
func TestSpill_hammer(t *testing.T) {
	sp, err := Open(t.TempDir(), 5*time.Second)
	require.NoError(t, err)
	defer sp.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				name := fmt.Sprintf("ex_%d.%d.s", w, i)
				data := []byte(name)
				if err := sp.Put(name, data); err != nil {
					t.Error(err)
					return
				}
				got, err := sp.Get(context.Background(), name)
				if err != nil || string(got) != name {
					t.Errorf("%s read back %q, %v", name, got, err)
					return
				}
				if err := sp.Remove(name); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
