package wasifs

import (
	"encoding/binary"
	"math"
)

// The calls that would write: the file system is read-only, and each
// fails with an errno, never a trap. Writing to a file the guest opened is
// EBADF (it is open for reading only: path_open refuses any other way);
// changing a file or the tree through a descriptor that is open is EROFS,
// through any other EBADF. Standard output and error take writes and
// discard them, as ptcx's other engines do.

// fd_write(fd, iovs, iovs_len, result_nwritten_ptr) -> errno: standard
// output and error discard what is written (nwritten is its length);
// anything else is EBADF.
func fdWrite(_ *Table, mem Memory, stack []uint64) {
	fd := uint32(stack[0])
	if fd != 1 && fd != 2 {
		stack[0] = errnoBadf
		return
	}
	n := uint32(stack[2])
	vec, errno := iovecs(mem, uint32(stack[1]), n)
	if errno != errnoSuccess {
		stack[0] = uint64(errno)
		return
	}
	var total uint64
	for i := uint32(0); i < n; i++ {
		total += uint64(binary.LittleEndian.Uint32(vec[i*8+4:]))
	}
	stack[0] = errnoWrite(writeU32(mem, uint32(stack[3]), uint32(min(total, math.MaxUint32))))
}

// fd_pwrite(fd, iovs, iovs_len, offset, result_nwritten_ptr) -> errno:
// the standard streams cannot seek (ESPIPE); nothing else is open for
// writing (EBADF).
func fdPwrite(_ *Table, _ Memory, stack []uint64) {
	if uint32(stack[0]) <= 2 {
		stack[0] = errnoSpipe
		return
	}
	stack[0] = errnoBadf
}

// fd_sync(fd), fd_datasync(fd), fd_filestat_set_size(fd, size),
// fd_filestat_set_times(fd, atim, mtim, fst_flags) -> errno: EROFS for a
// descriptor that is open (the standard streams included), else EBADF.
func fdSync(t *Table, _ Memory, stack []uint64) {
	fd := uint32(stack[0])
	if fd <= 2 || t.get(fd) != nil {
		stack[0] = errnoRofs
		return
	}
	stack[0] = errnoBadf
}

// path_create_directory, path_filestat_set_times, path_link,
// path_remove_directory, path_rename, path_unlink_file: their first
// parameter is a directory descriptor; EROFS when it is an open
// directory, ENOTDIR an open file, else EBADF.
func pathMutate(t *Table, _ Memory, stack []uint64) {
	stack[0] = uint64(mutableDir(t, uint32(stack[0])))
}

// path_symlink(old_path_ptr, old_path_len, fd, new_path_ptr, new_path_len)
// -> errno: as pathMutate's, its directory the third parameter.
func pathSymlink(t *Table, _ Memory, stack []uint64) {
	stack[0] = uint64(mutableDir(t, uint32(stack[2])))
}

func mutableDir(t *Table, fd uint32) uint32 {
	f := t.get(fd)
	switch {
	case f == nil:
		return errnoBadf
	case !f.dir:
		return errnoNotdir
	}
	return errnoRofs
}
