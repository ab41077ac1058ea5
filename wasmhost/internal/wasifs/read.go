package wasifs

import (
	"encoding/binary"
	"math"
)

// Reading files: fd_read, fd_pread, fd_seek, fd_tell. Standard input is
// always at its end; standard output and error cannot be read (EBADF), a
// directory neither (EISDIR).

// fd_read(fd, iovs, iovs_len, result_nread_ptr) -> errno
func fdRead(t *Table, mem Memory, stack []uint64) {
	fd := uint32(stack[0])
	f, errno := t.readable(fd)
	if errno != errnoSuccess {
		stack[0] = uint64(errno)
		return
	}
	var off int64
	if f != nil {
		off = f.offset
	}
	n, errno := read(f, mem, uint32(stack[1]), uint32(stack[2]), off, uint32(stack[3]))
	if errno == errnoSuccess && f != nil {
		f.offset += int64(n)
	}
	stack[0] = uint64(errno)
}

// fd_pread(fd, iovs, iovs_len, offset, result_nread_ptr) -> errno: the
// file's offset does not move; standard input cannot (ESPIPE).
func fdPread(t *Table, mem Memory, stack []uint64) {
	fd := uint32(stack[0])
	f, errno := t.readable(fd)
	switch {
	case errno != errnoSuccess:
		stack[0] = uint64(errno)
	case f == nil:
		stack[0] = errnoSpipe
	case stack[3] > math.MaxInt64:
		stack[0] = errnoInval
	default:
		_, errno = read(f, mem, uint32(stack[1]), uint32(stack[2]), int64(stack[3]), uint32(stack[4]))
		stack[0] = uint64(errno)
	}
}

// readable returns the file fd to read: nil for standard input.
func (t *Table) readable(fd uint32) (*file, uint32) {
	switch fd {
	case 0:
		return nil, errnoSuccess
	case 1, 2:
		return nil, errnoBadf
	}
	return t.regular(fd)
}

// regular returns the guest's open file fd when it is not a directory.
func (t *Table) regular(fd uint32) (*file, uint32) {
	f := t.get(fd)
	switch {
	case f == nil:
		return nil, errnoBadf
	case f.dir:
		return nil, errnoIsdir
	}
	return f, errnoSuccess
}

// read reads f (nil: standard input, at its end) from off into the iovecs
// and writes how many bytes it read at resultPtr.
func read(f *file, mem Memory, iovs, n uint32, off int64, resultPtr uint32) (uint32, uint32) {
	vec, errno := iovecs(mem, iovs, n)
	if errno != errnoSuccess {
		return 0, errno
	}
	if _, ok := mem.Read(resultPtr, 4); !ok {
		return 0, errnoFault
	}
	var total uint32
	for i := uint32(0); f != nil && i < n; i++ {
		l := binary.LittleEndian.Uint32(vec[i*8+4:])
		if l > math.MaxUint32-total {
			l = math.MaxUint32 - total
		}
		buf, _ := mem.Read(binary.LittleEndian.Uint32(vec[i*8:]), l)
		got, errno := f.readAt(buf, off+int64(total))
		total += uint32(got)
		if errno != errnoSuccess {
			return 0, errno
		}
		if uint32(got) < l {
			break
		}
	}
	writeU32(mem, resultPtr, total)
	return total, errnoSuccess
}

// fd_seek(fd, offset, whence, result_newoffset_ptr) -> errno: whence 0
// (set), 1 (current) or 2 (end), else EINVAL. The file cannot grow, so an
// offset before its start or past its end is EINVAL. The standard streams
// cannot seek (ESPIPE), a directory neither (EISDIR).
func fdSeek(t *Table, mem Memory, stack []uint64) {
	f, errno := t.seekable(uint32(stack[0]))
	if errno != errnoSuccess {
		stack[0] = uint64(errno)
		return
	}
	delta := int64(stack[1])
	var base int64
	switch uint32(stack[2]) {
	case 0:
	case 1:
		base = f.offset
	case 2:
		base = f.size
	default:
		stack[0] = errnoInval
		return
	}
	to := base + delta
	if (delta > 0 && to < base) || to < 0 || to > f.size {
		stack[0] = errnoInval
		return
	}
	if !writeU64(mem, uint32(stack[3]), uint64(to)) {
		stack[0] = errnoFault
		return
	}
	f.offset = to
	stack[0] = errnoSuccess
}

// fd_tell(fd, result_offset_ptr) -> errno
func fdTell(t *Table, mem Memory, stack []uint64) {
	f, errno := t.seekable(uint32(stack[0]))
	if errno != errnoSuccess {
		stack[0] = uint64(errno)
		return
	}
	stack[0] = errnoWrite(writeU64(mem, uint32(stack[1]), uint64(f.offset)))
}

// seekable returns the file fd to seek in.
func (t *Table) seekable(fd uint32) (*file, uint32) {
	if fd <= 2 {
		return nil, errnoSpipe
	}
	return t.regular(fd)
}
