package bytecode

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"
)

func key(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }

// Past its entry bound the cache drops the least recently used program; a
// lookup makes a program the most recently used.
func TestCache_Put_entryBound(t *testing.T) {
	c := New(2, 1<<20)
	c.Put(key("a"), []byte("A"))
	c.Put(key("b"), []byte("B"))
	_, ok := c.Get(key("a")) // a is now the most recently used
	require.True(t, ok)
	c.Put(key("c"), []byte("C"))
	_, ok = c.Get(key("b"))
	require.False(t, ok, "b, the least recently used, was dropped")
	for _, k := range []string{"a", "c"} {
		code, ok := c.Get(key(k))
		require.True(t, ok, k)
		require.Len(t, code, 1)
	}
	entries, bytes, hits, misses := c.Stats()
	require.Equal(t, 2, entries)
	require.EqualValues(t, 2, bytes)
	require.EqualValues(t, 3, hits)
	require.EqualValues(t, 1, misses)
}

// The byte bound: at it everything is kept, past it the oldest go, and
// bytecode larger than the bound is never cached.
func TestCache_Put_byteBound(t *testing.T) {
	c := New(100, 10)
	c.Put(key("a"), make([]byte, 4))
	c.Put(key("b"), make([]byte, 6)) // 10: at the bound
	_, bytes, _, _ := c.Stats()
	require.EqualValues(t, 10, bytes)
	c.Put(key("c"), make([]byte, 1)) // 11: a goes
	_, ok := c.Get(key("a"))
	require.False(t, ok)
	c.Put(key("big"), make([]byte, 11))
	_, ok = c.Get(key("big"))
	require.False(t, ok, "larger than the bound")
	entries, bytes, _, _ := c.Stats()
	require.Equal(t, 2, entries)
	require.EqualValues(t, 7, bytes)
}
