package wasifs

import (
	"encoding/binary"
)

// Memory is the calling instance's linear memory, as engine.Memory and
// wazero's api.Memory are: Read returns a view of the memory (a write to
// it is the memory's), and both report false outside it.
type Memory interface {
	Read(offset, byteCount uint32) ([]byte, bool)
	Write(offset uint32, v []byte) bool
}

// Func is one WASI function of the file system: Params has a letter a
// parameter, 'i' an i32 and 'I' an i64; the one result is an i32, the
// errno. Fn reads the parameters from stack (an i32 in the low 32 bits)
// and leaves the errno in stack[0]. It checks every pointer and length
// against mem (EFAULT), never panics nor traps.
type Func struct {
	Name   string
	Params string
	Fn     func(t *Table, mem Memory, stack []uint64)
}

// Funcs are the file functions of wasi_snapshot_preview1 that the Python
// guest imports (guest/python/imports_test.go), every fd_* and path_*
// call of its: those that read, and those that would write, which fail
// (refuse.go).
var Funcs = []Func{
	{"fd_prestat_get", "ii", fdPrestatGet},
	{"fd_prestat_dir_name", "iii", fdPrestatDirName},
	{"path_open", "iiiiiIIii", pathOpen},
	{"fd_close", "i", fdClose},
	{"fd_read", "iiii", fdRead},
	{"fd_pread", "iiiIi", fdPread},
	{"fd_seek", "iIii", fdSeek},
	{"fd_tell", "ii", fdTell},
	{"fd_fdstat_get", "ii", fdFdstatGet},
	{"fd_fdstat_set_flags", "ii", fdFdstatSetFlags},
	{"fd_filestat_get", "ii", fdFilestatGet},
	{"path_filestat_get", "iiiii", pathFilestatGet},
	{"fd_readdir", "iiiIi", fdReaddir},
	{"fd_advise", "iIIi", fdAdvise},
	{"path_readlink", "iiiiii", pathReadlink},
	{"fd_write", "iiii", fdWrite},
	{"fd_pwrite", "iiiIi", fdPwrite},
	{"fd_sync", "i", fdSync},
	{"fd_datasync", "i", fdSync},
	{"fd_filestat_set_size", "iI", fdSync},
	{"fd_filestat_set_times", "iIIi", fdSync},
	{"path_create_directory", "iii", pathMutate},
	{"path_filestat_set_times", "iiiiIIi", pathMutate},
	{"path_link", "iiiiiii", pathMutate},
	{"path_remove_directory", "iii", pathMutate},
	{"path_rename", "iiiiii", pathMutate},
	{"path_unlink_file", "iii", pathMutate},
	{"path_symlink", "iiiii", pathSymlink},
}

// fd_prestat_get(fd, result_ptr) -> errno: the preopen is a directory
// whose name is the mount; any other descriptor EBADF.
func fdPrestatGet(t *Table, mem Memory, stack []uint64) {
	if uint32(stack[0]) != Preopen {
		stack[0] = errnoBadf
		return
	}
	var b [8]byte // tag 0 (a directory), then the name's length
	binary.LittleEndian.PutUint32(b[4:], uint32(len(t.mount)))
	stack[0] = errnoWrite(mem.Write(uint32(stack[1]), b[:]))
}

// fd_prestat_dir_name(fd, path_ptr, path_len) -> errno: the mount's name,
// ENAMETOOLONG when path_len is shorter.
func fdPrestatDirName(t *Table, mem Memory, stack []uint64) {
	switch {
	case uint32(stack[0]) != Preopen:
		stack[0] = errnoBadf
	case uint32(stack[2]) < uint32(len(t.mount)):
		stack[0] = errnoNametoolong
	default:
		stack[0] = errnoWrite(mem.Write(uint32(stack[1]), []byte(t.mount)))
	}
}

// path_open(dirfd, dirflags, path_ptr, path_len, oflags, rights_base,
// rights_inheriting, fdflags, result_fd_ptr) -> errno: dirfd is the
// preopen or an open directory (else EBADF, ENOTDIR for a file); the path
// is resolved in it (resolve); O_CREAT, O_EXCL, O_TRUNC, a write right
// (rightsWrite) or a write fdflag (append, dsync, rsync, sync) is EROFS;
// O_DIRECTORY on a file ENOTDIR; EMFILE beyond MaxOpen.
func pathOpen(t *Table, mem Memory, stack []uint64) {
	dir := t.get(uint32(stack[0]))
	oflags, rights, fdflags := uint32(stack[4]), stack[5], uint32(stack[7])
	switch {
	case dir == nil:
		stack[0] = errnoBadf
		return
	case !dir.dir:
		stack[0] = errnoNotdir
		return
	case oflags&^(oflagCreat|oflagDirectory|oflagExcl|oflagTrunc) != 0 ||
		fdflags&^(fdflagsWrite|fdflagNonblock) != 0:
		stack[0] = errnoInval
		return
	case oflags&(oflagCreat|oflagExcl|oflagTrunc) != 0 || rights&rightsWrite != 0 || fdflags&fdflagsWrite != 0:
		stack[0] = errnoRofs
		return
	}
	rel, ok := mem.Read(uint32(stack[2]), uint32(stack[3]))
	if !ok {
		stack[0] = errnoFault
		return
	}
	p, mustDir, errno := resolve(dir.path, string(rel))
	if errno != errnoSuccess {
		stack[0] = uint64(errno)
		return
	}
	f, errno := t.openPath(p)
	if errno != errnoSuccess {
		stack[0] = uint64(errno)
		return
	}
	if !f.dir && (mustDir || oflags&oflagDirectory != 0) {
		f.close()
		stack[0] = errnoNotdir
		return
	}
	f.flags = uint16(fdflags)
	resultPtr := uint32(stack[8])
	if _, ok := mem.Read(resultPtr, 4); !ok {
		f.close()
		stack[0] = errnoFault
		return
	}
	fd, errno := t.add(f)
	if errno == errnoSuccess {
		writeU32(mem, resultPtr, fd)
	}
	stack[0] = uint64(errno)
}

// fd_close(fd) -> errno: closes a file the guest opened. The standard
// streams stay open (success, as the stateless fd_close of ptcx's other
// engines); the preopen cannot be closed (ENOTSUP); any other is EBADF.
func fdClose(t *Table, _ Memory, stack []uint64) {
	fd := uint32(stack[0])
	switch {
	case fd <= 2:
		stack[0] = errnoSuccess
	case fd == Preopen:
		stack[0] = errnoNotsup
	case t.get(fd) == nil:
		stack[0] = errnoBadf
	default:
		t.open[fd-firstFile].close()
		t.open[fd-firstFile] = nil
		stack[0] = errnoSuccess
	}
}

// errnoWrite is success when a write to memory was, else EFAULT.
func errnoWrite(ok bool) uint64 {
	if ok {
		return errnoSuccess
	}
	return errnoFault
}

func writeU32(mem Memory, ptr, v uint32) bool {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return mem.Write(ptr, b[:])
}

func writeU64(mem Memory, ptr uint32, v uint64) bool {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return mem.Write(ptr, b[:])
}

// maxIovecs is the most iovecs one call may pass (POSIX's IOV_MAX on
// Linux): more is EINVAL, as readv(2) says, so that the host's walk of
// them, work it does for the guest outside the compute meter, is bounded.
const maxIovecs = 1024

// iovecs checks the n iovecs at iovs (each a pointer and a length) and
// every buffer they name against mem, and returns them as raw bytes, or
// the errno that refuses them: EINVAL past maxIovecs, EFAULT outside mem.
func iovecs(mem Memory, iovs, n uint32) ([]byte, uint32) {
	if n > maxIovecs {
		return nil, errnoInval
	}
	vec, ok := mem.Read(iovs, n*8)
	if !ok {
		return nil, errnoFault
	}
	for i := uint32(0); i < n; i++ {
		if _, ok := mem.Read(binary.LittleEndian.Uint32(vec[i*8:]), binary.LittleEndian.Uint32(vec[i*8+4:])); !ok {
			return nil, errnoFault
		}
	}
	return vec, errnoSuccess
}
