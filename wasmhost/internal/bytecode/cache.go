// Package bytecode is a Runtime's cache of programs' bytecode, by the
// SHA-256 of their JavaScript.
package bytecode

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"sync/atomic"
)

// Cache keeps programs' bytecode by the SHA-256 of their
// JavaScript, least recently used first out, within a count and a byte
// bound. Its bytecode is host data: the engine compiled it in an instance
// of this Runtime before any code of the program ran there (ptcx_compile),
// and the host copied it out at once; no program can put bytes in it. It
// is safe for concurrent use; its slices are shared and never modified.
type Cache struct {
	maxEntries int
	maxBytes   int64

	mu      sync.Mutex
	bytes   int64
	entries map[[sha256.Size]byte]*list.Element
	lru     list.List // of *entry, most recently used first

	hits, misses atomic.Int64
}

type entry struct {
	key  [sha256.Size]byte
	code []byte
}

// New returns a cache of at most maxEntries programs and maxBytes of
// bytecode.
func New(maxEntries int, maxBytes int64) *Cache {
	return &Cache{maxEntries: maxEntries, maxBytes: maxBytes,
		entries: make(map[[sha256.Size]byte]*list.Element)}
}

// Get returns the bytecode of key, if cached.
func (c *Cache) Get(key [sha256.Size]byte) ([]byte, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok {
		c.lru.MoveToFront(e)
	}
	c.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return e.Value.(*entry).code, true
}

// Put caches code as key's bytecode, dropping the least recently used
// entries past the bounds. Bytecode larger than the byte bound is not
// cached.
func (c *Cache) Put(key [sha256.Size]byte, code []byte) {
	if int64(len(code)) > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.lru.MoveToFront(e)
		return
	}
	c.entries[key] = c.lru.PushFront(&entry{key: key, code: code})
	c.bytes += int64(len(code))
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		last := c.lru.Back()
		old := last.Value.(*entry)
		c.lru.Remove(last)
		delete(c.entries, old.key)
		c.bytes -= int64(len(old.code))
	}
}

// Stats returns the programs cached, their bytecode summed, and the
// lookups that found and missed.
func (c *Cache) Stats() (entries int, bytes, hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.bytes, c.hits.Load(), c.misses.Load()
}
