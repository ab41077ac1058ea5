package wasmhost

import (
	"sync"

	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// Recycling snapshot buffers. A first suspension writes its snapshot into
// a buffer of the whole changed heap (megabytes for a program holding
// megabytes): a new one costs its allocation, the zeroing and page faults
// of its first write, and the collections it brings, several times the
// copy itself (docs/performance-notebook.md, "Fourth pass"). A Runtime keeps a
// small free list of buffers whose snapshots their owner is done with, and
// a suspension takes one that holds its snapshot before it allocates.
//
// A buffer comes back only when its owner says so: RecycleSnapshot, or
// Resumption.Recycle (the snapshot being resumed, given to the Runtime).
// Until then it is the caller's, never written by a run. Taken from the
// list, it is one snapshot's alone: it leaves the list as it is handed
// out, and Suspended.Snapshot is clipped to the snapshot's length
// (b[:n:n]), so that nothing of the snapshot the buffer held before is
// reachable through it.
//
// The list is bounded in count and bytes (the buffers' capacities), and
// its bytes are charged to admission's committed memory as the warm
// pool's are (chargePool): a buffer that does not fit is left to the
// collector, and a run that does not fit beside the list takes its room
// (yieldSnapshotBuffer, from admit).

// Bounds of a Runtime's free list of snapshot buffers.
const (
	// snapshotBufferCount is how many buffers the free list keeps.
	snapshotBufferCount = 8
	// snapshotBufferBytes bounds the bytes the free list keeps, the
	// buffers' capacities summed: a buffer given back past it is left to
	// the collector.
	snapshotBufferBytes = 64 << 20
)

// snapshotBuffers is a Runtime's free list of snapshot buffers.
type snapshotBuffers struct {
	mu     sync.Mutex
	free   [][]byte // each of length 0, its capacity charged to admission
	bytes  int64
	closed bool
}

// takeSnapshotBuffer returns the smallest buffer of the free list that
// holds size bytes, else its largest, of length 0, or nil when the list
// is empty. size is the most a snapshot may take (its whole memory's
// blocks): a snapshot stores only the blocks that differ from the image,
// so a smaller buffer, likely the last snapshot of the same program, may
// hold it (encodeSnapshot makes one that does when it does not).
func (rt *Runtime) takeSnapshotBuffer(size int) []byte {
	f := &rt.snapBufs
	f.mu.Lock()
	at := -1
	for i, b := range f.free {
		switch {
		case at < 0:
			at = i
		case cap(f.free[at]) < size && cap(b) > cap(f.free[at]):
			at = i // larger, toward size
		case cap(b) >= size && cap(b) < cap(f.free[at]):
			at = i // the smallest that holds size
		}
	}
	if at < 0 {
		f.mu.Unlock()
		return nil
	}
	b := f.removeLocked(at)
	f.mu.Unlock()
	rt.unchargePool(int64(cap(b)))
	return b
}

// removeLocked takes buffer at out of the free list and its bytes off
// the list's count (the caller gives them back to admission); f.mu held.
func (f *snapshotBuffers) removeLocked(at int) []byte {
	b := f.free[at]
	n := len(f.free) - 1
	f.free[at] = f.free[n]
	f.free[n] = nil
	f.free = f.free[:n]
	f.bytes -= int64(cap(b))
	return b
}

// RecycleSnapshot gives the bytes of s's snapshot back to the Runtime,
// for a later suspension of one of its runs to write its snapshot into:
// call it once the caller is done with s.Snapshot, which it must not read
// again, nor anything sliced from it (it will hold another run's
// snapshot). s.Snapshot is nil once it returns, so that s itself cannot be
// read or resumed again; an idle suspension is released (Suspended.Release).
// The buffer is kept while the free list has room
// (snapshotBufferCount, snapshotBufferBytes) and committed memory fits
// it; else it is left to the collector. A nil s, or one whose snapshot is
// already nil, is a no-op.
//
// Resumption.Recycle does the same for a snapshot being resumed, once the
// resumed run is done with it.
func (rt *Runtime) RecycleSnapshot(s *Suspended) {
	if s == nil {
		return
	}
	s.Release() // an idle suspension's hold goes with its bytes
	b := s.buffer()
	s.Snapshot, s.buf = nil, nil
	rt.keepSnapshotBuffer(b)
}

// buffer returns the whole buffer s's snapshot was written into: the
// capacity past the snapshot is the buffer's, written by no one else.
func (s *Suspended) buffer() []byte {
	if s.buf != nil && sameBuffer(s.buf, s.Snapshot) {
		return s.buf[:0]
	}
	return s.Snapshot[:0]
}

// sameBuffer reports whether a and b start at the same byte.
func sameBuffer(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// keepSnapshotBuffer puts b in the free list, if it has room for it.
func (rt *Runtime) keepSnapshotBuffer(b []byte) {
	size := int64(cap(b))
	if size < snapshot.BlockSize {
		return
	}
	f := &rt.snapBufs
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || len(f.free) >= snapshotBufferCount || f.bytes+size > snapshotBufferBytes || !rt.chargePool(size) {
		return
	}
	f.free = append(f.free, b[:0])
	f.bytes += size
}

// yieldSnapshotBuffer drops the largest buffer of the free list, giving
// its bytes back to admission, and reports whether there was one.
func (rt *Runtime) yieldSnapshotBuffer() bool {
	f := &rt.snapBufs
	f.mu.Lock()
	at := -1
	for i, b := range f.free {
		if at < 0 || cap(b) > cap(f.free[at]) {
			at = i
		}
	}
	if at < 0 {
		f.mu.Unlock()
		return false
	}
	size := int64(cap(f.removeLocked(at)))
	f.mu.Unlock()
	rt.unchargePool(size)
	return true
}

// closeSnapshotBuffers drops the free list, for good (Runtime.Close).
func (rt *Runtime) closeSnapshotBuffers() {
	f := &rt.snapBufs
	f.mu.Lock()
	free, bytes := f.free, f.bytes
	f.free, f.bytes, f.closed = nil, 0, true
	f.mu.Unlock()
	if len(free) > 0 {
		rt.unchargePool(bytes)
	}
}
