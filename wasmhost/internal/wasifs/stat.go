package wasifs

import (
	"encoding/binary"
	"hash/fnv"
	"io/fs"
	"path"
	"sort"
)

// Describing files: fd_fdstat_get, fd_fdstat_set_flags, fd_filestat_get,
// path_filestat_get, fd_readdir, fd_advise, path_readlink. Every file has
// device 1, one link, an inode that is a hash of its path (never 0:
// wasi-libc's readdir would stat the entry to learn it), and its fs's
// modification time as its three times (0 when the fs has none, as embed.FS).

// fd_fdstat_get(fd, result_ptr) -> errno: the standard streams are
// character devices with no rights (as ptcx's other engines report them);
// a directory has rightsDir and passes on every right (path_open refuses
// the write ones itself), a file rightsFile.
func fdFdstatGet(t *Table, mem Memory, stack []uint64) {
	var b [24]byte
	fd := uint32(stack[0])
	if fd <= 2 {
		b[0] = typeCharDevice
	} else {
		f := t.get(fd)
		switch {
		case f == nil:
			stack[0] = errnoBadf
			return
		case f.dir:
			b[0] = typeDirectory
			binary.LittleEndian.PutUint64(b[8:], rightsDir)
			binary.LittleEndian.PutUint64(b[16:], rightsAll)
		default:
			b[0] = typeRegular
			binary.LittleEndian.PutUint64(b[8:], rightsFile)
		}
		binary.LittleEndian.PutUint16(b[2:], f.flags)
	}
	stack[0] = errnoWrite(mem.Write(uint32(stack[1]), b[:]))
}

// fd_fdstat_set_flags(fd, flags) -> errno: a file or directory takes 0 or
// nonblock (which changes nothing: reading never blocks); a write flag is
// EROFS, an unknown one EINVAL; the standard streams keep theirs (ENOTSUP).
func fdFdstatSetFlags(t *Table, _ Memory, stack []uint64) {
	fd, flags := uint32(stack[0]), uint32(stack[1])
	f := t.get(fd)
	switch {
	case fd <= 2:
		stack[0] = errnoNotsup
	case f == nil:
		stack[0] = errnoBadf
	case flags&^(fdflagsWrite|fdflagNonblock) != 0:
		stack[0] = errnoInval
	case flags&fdflagsWrite != 0:
		stack[0] = errnoRofs
	case fd == Preopen:
		stack[0] = errnoNotsup // the preopen is shared by the table's resets: its flags stay
	default:
		f.flags = uint16(flags)
		stack[0] = errnoSuccess
	}
}

// fd_filestat_get(fd, result_ptr) -> errno
func fdFilestatGet(t *Table, mem Memory, stack []uint64) {
	fd := uint32(stack[0])
	if fd <= 2 {
		var b [64]byte
		b[16] = typeCharDevice
		stack[0] = errnoWrite(mem.Write(uint32(stack[1]), b[:]))
		return
	}
	f := t.get(fd)
	if f == nil {
		stack[0] = errnoBadf
		return
	}
	stack[0] = uint64(t.filestat(mem, f.path, uint32(stack[1])))
}

// path_filestat_get(fd, flags, path_ptr, path_len, result_ptr) -> errno:
// the path is resolved in the directory fd as path_open's.
func pathFilestatGet(t *Table, mem Memory, stack []uint64) {
	p, errno := t.lookup(mem, uint32(stack[0]), uint32(stack[2]), uint32(stack[3]))
	if errno != errnoSuccess {
		stack[0] = uint64(errno)
		return
	}
	stack[0] = uint64(t.filestat(mem, p, uint32(stack[4])))
}

// lookup resolves the path at ptr in the directory dirfd and checks that
// it exists; with a trailing slash it must be a directory.
func (t *Table) lookup(mem Memory, dirfd, ptr, n uint32) (string, uint32) {
	dir := t.get(dirfd)
	switch {
	case dir == nil:
		return "", errnoBadf
	case !dir.dir:
		return "", errnoNotdir
	}
	rel, ok := mem.Read(ptr, n)
	if !ok {
		return "", errnoFault
	}
	p, mustDir, errno := resolve(dir.path, string(rel))
	if errno != errnoSuccess {
		return "", errno
	}
	info, err := fs.Stat(t.fsys, p)
	switch {
	case err != nil:
		return "", errnoOf(err)
	case mustDir && !info.IsDir():
		return "", errnoNotdir
	}
	return p, errnoSuccess
}

// filestat writes the filestat of the path p at ptr.
func (t *Table) filestat(mem Memory, p string, ptr uint32) uint32 {
	info, err := fs.Stat(t.fsys, p)
	if err != nil {
		return errnoOf(err)
	}
	var b [64]byte
	binary.LittleEndian.PutUint64(b[0:], 1)
	binary.LittleEndian.PutUint64(b[8:], inode(p))
	b[16] = typeRegular
	if info.IsDir() {
		b[16] = typeDirectory
	} else {
		binary.LittleEndian.PutUint64(b[32:], uint64(info.Size()))
	}
	binary.LittleEndian.PutUint64(b[24:], 1)
	var ns uint64
	if m := info.ModTime(); !m.IsZero() && m.UnixNano() > 0 {
		ns = uint64(m.UnixNano())
	}
	for _, at := range []int{40, 48, 56} {
		binary.LittleEndian.PutUint64(b[at:], ns)
	}
	return uint32(errnoWrite(mem.Write(ptr, b[:])))
}

// inode is the inode number of the path p: its FNV-1a hash, never 0.
func inode(p string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(p))
	return h.Sum64() | 1
}

// dirent is one entry of a directory's listing.
type dirent struct {
	name  string
	ino   uint64
	ftype byte
}

// fd_readdir(fd, buf, buf_len, cookie, result_bufused_ptr) -> errno: the
// directory's entries from the cookie'th (".", "..", then the fs's by
// name), each a 24-byte dirent and its name, whose d_next is the cookie of
// the one after; the last is cut at buf_len (bufused == buf_len, the guest
// asks again with a larger buffer). A cookie past the end gives none.
func fdReaddir(t *Table, mem Memory, stack []uint64) {
	f := t.get(uint32(stack[0]))
	switch {
	case f == nil:
		stack[0] = errnoBadf
		return
	case !f.dir:
		stack[0] = errnoNotdir
		return
	}
	buf, ok := mem.Read(uint32(stack[1]), uint32(stack[2]))
	if !ok {
		stack[0] = errnoFault
		return
	}
	resultPtr := uint32(stack[4])
	if _, ok := mem.Read(resultPtr, 4); !ok {
		stack[0] = errnoFault
		return
	}
	if f.list == nil {
		list, errno := t.listing(f.path)
		if errno != errnoSuccess {
			stack[0] = uint64(errno)
			return
		}
		f.list = list
	}
	used := 0
	for i := stack[3]; i < uint64(len(f.list)) && used < len(buf); i++ {
		e := f.list[i]
		var h [24]byte
		binary.LittleEndian.PutUint64(h[0:], i+1)
		binary.LittleEndian.PutUint64(h[8:], e.ino)
		binary.LittleEndian.PutUint32(h[16:], uint32(len(e.name)))
		h[20] = e.ftype
		used += copy(buf[used:], h[:])
		used += copy(buf[used:], e.name)
	}
	writeU32(mem, resultPtr, uint32(used))
	stack[0] = errnoSuccess
}

// listing returns the entries of the directory p.
func (t *Table) listing(p string) ([]dirent, uint32) {
	entries, err := fs.ReadDir(t.fsys, p)
	if err != nil {
		return nil, errnoOf(err)
	}
	parent := path.Dir(p)
	list := []dirent{{".", inode(p), typeDirectory}, {"..", inode(parent), typeDirectory}}
	for _, e := range entries {
		ft := byte(typeRegular)
		if e.IsDir() {
			ft = typeDirectory
		}
		list = append(list, dirent{e.Name(), inode(path.Join(p, e.Name())), ft})
	}
	sort.SliceStable(list[2:], func(i, j int) bool { return list[2+i].name < list[2+j].name })
	return list, errnoSuccess
}

// fd_advise(fd, offset, len, advice) -> errno: advice 0 to 5 is taken and
// changes nothing; the standard streams are ESPIPE.
func fdAdvise(t *Table, _ Memory, stack []uint64) {
	fd := uint32(stack[0])
	switch {
	case fd <= 2:
		stack[0] = errnoSpipe
	case t.get(fd) == nil:
		stack[0] = errnoBadf
	case uint32(stack[3]) > 5:
		stack[0] = errnoInval
	default:
		stack[0] = errnoSuccess
	}
}

// path_readlink(fd, path_ptr, path_len, buf, buf_len, result_bufused_ptr)
// -> errno: the fs has no links, so a path that exists is EINVAL (not a
// link), else path_filestat_get's errno.
func pathReadlink(t *Table, mem Memory, stack []uint64) {
	_, errno := t.lookup(mem, uint32(stack[0]), uint32(stack[1]), uint32(stack[2]))
	if errno == errnoSuccess {
		errno = errnoInval
	}
	stack[0] = uint64(errno)
}
