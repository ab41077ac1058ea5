package wasmhost

import (
	"crypto/sha256"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
)

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
	if rt.bytecode == nil {
		return BytecodeStats{}
	}
	entries, bytes, hits, misses := rt.bytecode.Stats()
	return BytecodeStats{Entries: entries, Bytes: bytes, Hits: hits, Misses: misses}
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
	if code, ok := c.Get(key); ok {
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
		c.Put(key, append([]byte(nil), code...))
	}
	return true, nil
}
