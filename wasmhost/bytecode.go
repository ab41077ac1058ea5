package wasmhost

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
)

// bytecodeCache keeps programs' bytecode by the SHA-256 of their
// JavaScript, least recently used first out, within a count and a byte
// bound. Its bytecode is host data: the engine compiled it in an instance
// of this Runtime before any code of the program ran there (ptcx_compile),
// and the host copied it out at once; no program can put bytes in it. It
// is safe for concurrent use; its slices are shared and never modified.
type bytecodeCache struct {
	maxEntries int
	maxBytes   int64

	mu      sync.Mutex
	bytes   int64
	entries map[[sha256.Size]byte]*list.Element
	lru     list.List // of *bytecodeEntry, most recently used first

	hits, misses atomic.Int64
}

type bytecodeEntry struct {
	key  [sha256.Size]byte
	code []byte
}

func newBytecodeCache(maxEntries int, maxBytes int64) *bytecodeCache {
	return &bytecodeCache{maxEntries: maxEntries, maxBytes: maxBytes,
		entries: make(map[[sha256.Size]byte]*list.Element)}
}

// get returns the bytecode of key, if cached.
func (c *bytecodeCache) get(key [sha256.Size]byte) ([]byte, bool) {
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
	return e.Value.(*bytecodeEntry).code, true
}

// put caches code as key's bytecode, dropping the least recently used
// entries past the bounds. Bytecode larger than the byte bound is not
// cached.
func (c *bytecodeCache) put(key [sha256.Size]byte, code []byte) {
	if int64(len(code)) > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.lru.MoveToFront(e)
		return
	}
	c.entries[key] = c.lru.PushFront(&bytecodeEntry{key: key, code: code})
	c.bytes += int64(len(code))
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		last := c.lru.Back()
		old := last.Value.(*bytecodeEntry)
		c.lru.Remove(last)
		delete(c.entries, old.key)
		c.bytes -= int64(len(old.code))
	}
}

// BytecodeStats describes a Runtime's bytecode cache, for metrics and
// tests.
type BytecodeStats struct {
	Entries int   // programs cached
	Bytes   int64 // their bytecode, summed
	Hits    int64 // runs that loaded cached bytecode
	Misses  int64 // runs that compiled their program
}

// BytecodeStats returns the bytecode cache's counters; zero when it is
// off.
func (rt *Runtime) BytecodeStats() BytecodeStats {
	c := rt.bytecode
	if c == nil {
		return BytecodeStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return BytecodeStats{Entries: len(c.entries), Bytes: c.bytes, Hits: c.hits.Load(), Misses: c.misses.Load()}
}

// stage has the guest's function of the program ready before ptcx_start,
// with the bytecode cache: loaded from cached bytecode (ptcx_load), or
// compiled (ptcx_compile), its bytecode then cached. It reports whether a
// function is staged; when not (no cache, a program that does not compile,
// bytecode the engine could not write), ptcx_start compiles the code and
// reports what is wrong with it.
func (r *run) stage() (bool, *RunError) {
	c := r.rt.bytecode
	if c == nil || r.inst.compile == nil || r.inst.load == nil {
		return false, nil
	}
	key := sha256.Sum256([]byte(r.prog.JS))
	limit := uint64(abi.EngineMemoryLimit(r.limits.MemoryBytes))
	st := &r.inst.stack
	if code, ok := c.get(key); ok {
		ptr, e := r.write(code)
		if e != nil {
			return false, e
		}
		st[0], st[1], st[2] = uint64(ptr), uint64(len(code)), limit
		status, e := r.call(r.inst.load)
		return e == nil && status == abi.StatusDone, e
	}
	ptr, e := r.write([]byte(r.prog.JS))
	if e != nil {
		return false, e
	}
	st[0], st[1], st[2] = uint64(ptr), uint64(len(r.prog.JS)), limit
	res, e := r.call(r.inst.compile)
	if e != nil || res == 0 {
		return false, e
	}
	// [length, u32 little-endian][bytecode], written by the engine before
	// any of the program ran: copied out now, it is host data.
	at := uint32(res)
	n, ok := r.inst.mem.ReadUint32Le(at)
	if !ok {
		return true, nil
	}
	if code, ok := r.inst.mem.Read(at+4, n); ok {
		c.put(key, append([]byte(nil), code...))
	}
	return true, nil
}
