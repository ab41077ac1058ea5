package wasifs

import (
	"encoding/binary"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// sliceMemory is a linear memory of its bytes.
type sliceMemory []byte

func (m sliceMemory) Read(offset, n uint32) ([]byte, bool) {
	if uint64(offset)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[offset : offset+n : offset+n], true
}

func (m sliceMemory) Write(offset uint32, v []byte) bool {
	if uint64(offset)+uint64(len(v)) > uint64(len(m)) {
		return false
	}
	copy(m[offset:], v)
	return true
}

var testFS = fstest.MapFS{
	"lib.zip":     {Data: []byte("0123456789")},
	"sub/b.txt":   {Data: []byte("bee")},
	"sub/a.txt":   {Data: []byte("a")},
	"sub/deep/x":  {Data: nil},
	"empty/.keep": {Data: nil},
}

// fixture is a table over testFS with a 64 KiB memory; scratch is at 1024,
// paths are written at 4096.
type fixture struct {
	t   *testing.T
	tab *Table
	mem sliceMemory
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, tab: New(testFS, "/usr/local/lib"), mem: make(sliceMemory, 1<<16)}
}

const (
	scratch = 1024
	pathAt  = 4096
)

// call calls the function name with args and returns its errno.
func (f *fixture) call(name string, args ...uint64) uint64 {
	f.t.Helper()
	for _, fn := range Funcs {
		if fn.Name == name {
			require.Len(f.t, args, len(fn.Params), name)
			stack := make([]uint64, max(len(args), 1))
			copy(stack, args)
			fn.Fn(f.tab, f.mem, stack)
			return stack[0]
		}
	}
	f.t.Fatalf("no function %s", name)
	return 0
}

// open opens p in the preopen with oflags, rights and fdflags, and returns
// the errno and the descriptor.
func (f *fixture) open(p string, oflags, rights, fdflags uint64) (uint64, uint32) {
	f.t.Helper()
	copy(f.mem[pathAt:], p)
	errno := f.call("path_open", Preopen, 1, pathAt, uint64(len(p)), oflags, rights, rightsAll, fdflags, scratch)
	return errno, binary.LittleEndian.Uint32(f.mem[scratch:])
}

func (f *fixture) mustOpen(p string) uint32 {
	f.t.Helper()
	errno, fd := f.open(p, 0, rightsFile, 0)
	require.Equal(f.t, uint64(errnoSuccess), errno, "open %s", p)
	return fd
}

// read reads up to n bytes from fd into scratch+64 through one iovec.
func (f *fixture) read(fd uint32, n uint32) (uint64, string) {
	f.t.Helper()
	binary.LittleEndian.PutUint32(f.mem[scratch:], scratch+64)
	binary.LittleEndian.PutUint32(f.mem[scratch+4:], n)
	errno := f.call("fd_read", uint64(fd), scratch, 1, scratch+16)
	got := binary.LittleEndian.Uint32(f.mem[scratch+16:])
	return errno, string(f.mem[scratch+64 : scratch+64+got])
}

func TestTable_prestat(t *testing.T) {
	f := newFixture(t)
	require.Equal(t, uint64(errnoSuccess), f.call("fd_prestat_get", Preopen, scratch))
	require.Equal(t, uint32(len("/usr/local/lib")), binary.LittleEndian.Uint32(f.mem[scratch+4:]))
	require.Equal(t, uint64(errnoBadf), f.call("fd_prestat_get", Preopen+1, scratch))
	require.Equal(t, uint64(errnoFault), f.call("fd_prestat_get", Preopen, 1<<16-4))
	require.Equal(t, uint64(errnoNametoolong), f.call("fd_prestat_dir_name", Preopen, scratch, 3))
	require.Equal(t, uint64(errnoSuccess), f.call("fd_prestat_dir_name", Preopen, scratch, 14))
	require.Equal(t, "/usr/local/lib", string(f.mem[scratch:scratch+14]))
}

func TestTable_pathOpen(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		path                    string
		oflags, rights, fdflags uint64
		errno                   uint64
	}{
		{"file", "lib.zip", 0, rightsFile, 0, errnoSuccess},
		{"dir", "sub", oflagDirectory, rightsDir, 0, errnoSuccess},
		{"root", ".", oflagDirectory, rightsDir, 0, errnoSuccess},
		{"dot dot inside", "sub/../lib.zip", 0, rightsFile, 0, errnoSuccess},
		{"nonblock", "lib.zip", 0, rightsFile, fdflagNonblock, errnoSuccess},
		{"every read right", "lib.zip", 0, rightsAll &^ rightsWrite, 0, errnoSuccess},
		{"dot dot above the root", "../lib/lib.zip", 0, rightsFile, 0, errnoNotcapable},
		{"dot dot above, deep", "sub/../../x", 0, rightsFile, 0, errnoNotcapable},
		{"absolute", "/usr/local/lib/lib.zip", 0, rightsFile, 0, errnoNotcapable},
		{"empty", "", 0, rightsFile, 0, errnoNoent},
		{"nul", "lib.zip\x00", 0, rightsFile, 0, errnoInval},
		{"missing", "nope", 0, rightsFile, 0, errnoNoent},
		{"directory flag on a file", "lib.zip", oflagDirectory, rightsFile, 0, errnoNotdir},
		{"trailing slash on a file", "lib.zip/", 0, rightsFile, 0, errnoNotdir},
		{"creat", "new", oflagCreat, rightsFile, 0, errnoRofs},
		{"creat existing", "lib.zip", oflagCreat, rightsFile, 0, errnoRofs},
		{"excl", "lib.zip", oflagCreat | oflagExcl, rightsFile, 0, errnoRofs},
		{"trunc", "lib.zip", oflagTrunc, rightsFile, 0, errnoRofs},
		{"write right", "lib.zip", 0, rightsFile | rightFdWrite, 0, errnoRofs},
		{"datasync right", "lib.zip", 0, rightsFile | rightFdDatasync, 0, errnoRofs},
		{"set size right", "lib.zip", 0, rightsFile | rightFdFilestatSetSize, 0, errnoRofs},
		{"append", "lib.zip", 0, rightsFile, fdflagAppend, errnoRofs},
		{"sync", "lib.zip", 0, rightsFile, fdflagSync, errnoRofs},
		{"unknown oflag", "lib.zip", 1 << 7, rightsFile, 0, errnoInval},
		{"unknown fdflag", "lib.zip", 0, rightsFile, 1 << 9, errnoInval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			errno, fd := f.open(tc.path, tc.oflags, tc.rights, tc.fdflags)
			require.Equal(t, tc.errno, errno)
			if errno == errnoSuccess {
				require.Equal(t, uint32(firstFile), fd)
				require.Len(t, f.tab.Files(), 1)
			} else {
				require.Empty(t, f.tab.Files())
			}
		})
	}
}

func TestTable_pathOpen_badArgs(t *testing.T) {
	f := newFixture(t)
	copy(f.mem[pathAt:], "lib.zip")
	require.Equal(t, uint64(errnoBadf), f.call("path_open", 9, 0, pathAt, 7, 0, rightsFile, 0, 0, scratch), "no such dirfd")
	require.Equal(t, uint64(errnoFault), f.call("path_open", Preopen, 0, 1<<16-3, 7, 0, rightsFile, 0, 0, scratch), "path outside")
	require.Equal(t, uint64(errnoFault), f.call("path_open", Preopen, 0, pathAt, 7, 0, rightsFile, 0, 0, 1<<16-1), "result outside")
	require.Empty(t, f.tab.Files(), "nothing opened when the result cannot be written")
	fd := f.mustOpen("lib.zip")
	require.Equal(t, uint64(errnoNotdir), f.call("path_open", uint64(fd), 0, pathAt, 7, 0, rightsFile, 0, 0, scratch), "a file as dirfd")

	dir := f.mustOpen("sub")
	copy(f.mem[pathAt:], "b.txt")
	require.Equal(t, uint64(errnoSuccess), f.call("path_open", uint64(dir), 0, pathAt, 5, 0, rightsFile, 0, 0, scratch))
	copy(f.mem[pathAt:], "../lib.zip")
	require.Equal(t, uint64(errnoSuccess), f.call("path_open", uint64(dir), 0, pathAt, 10, 0, rightsFile, 0, 0, scratch), "up to the root")
	copy(f.mem[pathAt:], "../../x")
	require.Equal(t, uint64(errnoNotcapable), f.call("path_open", uint64(dir), 0, pathAt, 7, 0, rightsFile, 0, 0, scratch))
}

func TestTable_pathOpen_emfile(t *testing.T) {
	f := newFixture(t)
	for i := range MaxOpen {
		require.Equal(t, uint32(firstFile+i), f.mustOpen("lib.zip"))
	}
	errno, _ := f.open("lib.zip", 0, rightsFile, 0)
	require.Equal(t, uint64(errnoMfile), errno)
	require.Equal(t, uint64(errnoSuccess), f.call("fd_close", firstFile+7))
	require.Equal(t, uint32(firstFile+7), f.mustOpen("lib.zip"), "the lowest free descriptor")
	f.tab.Reset()
	require.Empty(t, f.tab.Files())
	require.Equal(t, uint32(firstFile), f.mustOpen("lib.zip"))
}

func TestTable_read(t *testing.T) {
	f := newFixture(t)
	fd := f.mustOpen("lib.zip")
	errno, got := f.read(fd, 4)
	require.Equal(t, uint64(errnoSuccess), errno)
	require.Equal(t, "0123", got)
	errno, got = f.read(fd, 100)
	require.Equal(t, uint64(errnoSuccess), errno)
	require.Equal(t, "456789", got)
	_, got = f.read(fd, 100)
	require.Empty(t, got, "at the end")

	require.Equal(t, uint64(errnoSuccess), f.call("fd_seek", uint64(fd), uint64(^uint64(2)), 2, scratch+32), "2 before the end")
	require.Equal(t, uint64(7), binary.LittleEndian.Uint64(f.mem[scratch+32:]))
	require.Equal(t, uint64(errnoSuccess), f.call("fd_tell", uint64(fd), scratch+32))
	require.Equal(t, uint64(7), binary.LittleEndian.Uint64(f.mem[scratch+32:]))
	require.Equal(t, uint64(errnoInval), f.call("fd_seek", uint64(fd), 11, 0, scratch+32), "past the end")
	require.Equal(t, uint64(errnoInval), f.call("fd_seek", uint64(fd), uint64(^uint64(0)), 0, scratch+32), "before the start")
	require.Equal(t, uint64(errnoInval), f.call("fd_seek", uint64(fd), 0, 3, scratch+32), "whence")
	require.Equal(t, uint64(errnoFault), f.call("fd_seek", uint64(fd), 0, 0, 1<<16-7), "result outside")
	require.Equal(t, int64(7), f.tab.Files()[0].Offset, "a failed seek does not move")

	binary.LittleEndian.PutUint32(f.mem[scratch:], scratch+64)
	binary.LittleEndian.PutUint32(f.mem[scratch+4:], 3)
	require.Equal(t, uint64(errnoSuccess), f.call("fd_pread", uint64(fd), scratch, 1, 1, scratch+16))
	require.Equal(t, "123", string(f.mem[scratch+64:scratch+67]))
	require.Equal(t, int64(7), f.tab.Files()[0].Offset, "pread does not move")

	// Two iovecs, the second outside memory: EFAULT, nothing read.
	binary.LittleEndian.PutUint32(f.mem[scratch+8:], 1<<16-2)
	binary.LittleEndian.PutUint32(f.mem[scratch+12:], 8)
	require.Equal(t, uint64(errnoFault), f.call("fd_read", uint64(fd), scratch, 2, scratch+16))
	require.Equal(t, uint64(errnoFault), f.call("fd_read", uint64(fd), 1<<16-8, 2, scratch+16), "iovecs outside")
	require.Equal(t, int64(7), f.tab.Files()[0].Offset)

	// At most maxIovecs iovecs (here empty ones, zeroed memory): one more
	// is EINVAL, as is a count the memory could not hold, before any walk.
	const many = 1 << 15
	require.Equal(t, uint64(errnoSuccess), f.call("fd_read", uint64(fd), many, maxIovecs, scratch+16))
	require.Equal(t, uint64(errnoInval), f.call("fd_read", uint64(fd), many, maxIovecs+1, scratch+16))
	require.Equal(t, uint64(errnoInval), f.call("fd_pread", uint64(fd), many, maxIovecs+1, 0, scratch+16))
	require.Equal(t, uint64(errnoInval), f.call("fd_read", uint64(fd), scratch, 1<<30, scratch+16))
	require.Equal(t, uint64(errnoSuccess), f.call("fd_write", 1, many, maxIovecs, scratch+16))
	require.Equal(t, uint64(errnoInval), f.call("fd_write", 1, many, maxIovecs+1, scratch+16))
	require.Equal(t, int64(7), f.tab.Files()[0].Offset)

	errno, got = f.read(0, 10)
	require.Equal(t, uint64(errnoSuccess), errno)
	require.Empty(t, got, "standard input is at its end")
	errno, _ = f.read(1, 10)
	require.Equal(t, uint64(errnoBadf), errno)
	errno, _ = f.read(Preopen, 10)
	require.Equal(t, uint64(errnoIsdir), errno)
	errno, _ = f.read(99, 10)
	require.Equal(t, uint64(errnoBadf), errno)
	require.Equal(t, uint64(errnoSpipe), f.call("fd_seek", 1, 0, 0, scratch))
}

func TestTable_stat(t *testing.T) {
	f := newFixture(t)
	fd := f.mustOpen("sub/b.txt")
	require.Equal(t, uint64(errnoSuccess), f.call("fd_filestat_get", uint64(fd), scratch))
	require.Equal(t, byte(typeRegular), f.mem[scratch+16])
	require.Equal(t, uint64(3), binary.LittleEndian.Uint64(f.mem[scratch+32:]))
	require.NotZero(t, binary.LittleEndian.Uint64(f.mem[scratch+8:]), "an inode")

	copy(f.mem[pathAt:], "sub/")
	require.Equal(t, uint64(errnoSuccess), f.call("path_filestat_get", Preopen, 0, pathAt, 4, scratch))
	require.Equal(t, byte(typeDirectory), f.mem[scratch+16])
	copy(f.mem[pathAt:], "nope")
	require.Equal(t, uint64(errnoNoent), f.call("path_filestat_get", Preopen, 0, pathAt, 4, scratch))
	require.Equal(t, uint64(errnoFault), f.call("path_filestat_get", Preopen, 0, pathAt, 1<<20, scratch))

	require.Equal(t, uint64(errnoSuccess), f.call("fd_fdstat_get", Preopen, scratch))
	require.Equal(t, byte(typeDirectory), f.mem[scratch])
	require.Equal(t, uint64(rightsAll), binary.LittleEndian.Uint64(f.mem[scratch+16:]))
	require.Equal(t, uint64(errnoSuccess), f.call("fd_fdstat_get", 2, scratch))
	require.Equal(t, byte(typeCharDevice), f.mem[scratch])
	require.Equal(t, uint64(errnoBadf), f.call("fd_fdstat_get", 40, scratch))

	require.Equal(t, uint64(errnoSuccess), f.call("fd_fdstat_set_flags", uint64(fd), fdflagNonblock))
	require.Equal(t, uint16(fdflagNonblock), f.tab.Files()[0].Flags)
	require.Equal(t, uint64(errnoRofs), f.call("fd_fdstat_set_flags", uint64(fd), fdflagAppend))
	require.Equal(t, uint64(errnoInval), f.call("fd_fdstat_set_flags", uint64(fd), 1<<8))

	copy(f.mem[pathAt:], "lib.zip")
	require.Equal(t, uint64(errnoInval), f.call("path_readlink", Preopen, pathAt, 7, scratch, 16, scratch+32), "not a link")
	require.Equal(t, uint64(errnoSuccess), f.call("fd_advise", uint64(fd), 0, 0, 1))
	require.Equal(t, uint64(errnoInval), f.call("fd_advise", uint64(fd), 0, 0, 6))
}

func TestTable_readdir(t *testing.T) {
	f := newFixture(t)
	dir := f.mustOpen("sub")
	list := func(cookie uint64, n uint32) (uint64, []string, uint32) {
		t.Helper()
		errno := f.call("fd_readdir", uint64(dir), scratch+64, uint64(n), cookie, scratch)
		used := binary.LittleEndian.Uint32(f.mem[scratch:])
		var names []string
		for b := f.mem[scratch+64 : scratch+64+used]; len(b) >= 24; {
			l := binary.LittleEndian.Uint32(b[16:])
			if uint32(len(b)) < 24+l {
				break
			}
			names = append(names, string(b[24:24+l]))
			b = b[24+l:]
		}
		return errno, names, used
	}
	errno, names, _ := list(0, 4096)
	require.Equal(t, uint64(errnoSuccess), errno)
	require.Equal(t, []string{".", "..", "a.txt", "b.txt", "deep"}, names)
	_, names, _ = list(3, 4096)
	require.Equal(t, []string{"b.txt", "deep"}, names, "from a cookie")
	_, names, used := list(0, 30)
	require.Equal(t, []string{"."}, names)
	require.Equal(t, uint32(30), used, "the buffer filled: the guest asks again")
	_, names, _ = list(99, 4096)
	require.Empty(t, names)
	require.Equal(t, uint64(errnoNotdir), f.call("fd_readdir", uint64(f.mustOpen("lib.zip")), scratch, 16, 0, scratch))
	require.Equal(t, uint64(errnoFault), f.call("fd_readdir", uint64(dir), 1<<16-8, 16, 0, scratch))
}

func TestTable_writesRefused(t *testing.T) {
	f := newFixture(t)
	fd := uint64(f.mustOpen("lib.zip"))
	binary.LittleEndian.PutUint32(f.mem[scratch:], scratch+64)
	binary.LittleEndian.PutUint32(f.mem[scratch+4:], 5)
	for _, tc := range []struct {
		name  string
		args  []uint64
		errno uint64
	}{
		{"fd_write", []uint64{1, scratch, 1, scratch + 16}, errnoSuccess},
		{"fd_write", []uint64{2, scratch, 1, scratch + 16}, errnoSuccess},
		{"fd_write", []uint64{fd, scratch, 1, scratch + 16}, errnoBadf},
		{"fd_write", []uint64{0, scratch, 1, scratch + 16}, errnoBadf},
		{"fd_write", []uint64{1, 1<<16 - 4, 1, scratch + 16}, errnoFault},
		{"fd_pwrite", []uint64{fd, scratch, 1, 0, scratch + 16}, errnoBadf},
		{"fd_pwrite", []uint64{1, scratch, 1, 0, scratch + 16}, errnoSpipe},
		{"fd_sync", []uint64{fd}, errnoRofs},
		{"fd_datasync", []uint64{fd}, errnoRofs},
		{"fd_sync", []uint64{50}, errnoBadf},
		{"fd_filestat_set_size", []uint64{fd, 0}, errnoRofs},
		{"fd_filestat_set_times", []uint64{fd, 0, 0, 0}, errnoRofs},
		{"path_create_directory", []uint64{Preopen, pathAt, 1}, errnoRofs},
		{"path_create_directory", []uint64{fd, pathAt, 1}, errnoNotdir},
		{"path_create_directory", []uint64{77, pathAt, 1}, errnoBadf},
		{"path_filestat_set_times", []uint64{Preopen, 0, pathAt, 1, 0, 0, 0}, errnoRofs},
		{"path_link", []uint64{Preopen, 0, pathAt, 1, Preopen, pathAt, 1}, errnoRofs},
		{"path_remove_directory", []uint64{Preopen, pathAt, 1}, errnoRofs},
		{"path_rename", []uint64{Preopen, pathAt, 1, Preopen, pathAt, 1}, errnoRofs},
		{"path_unlink_file", []uint64{Preopen, pathAt, 1}, errnoRofs},
		{"path_symlink", []uint64{pathAt, 1, Preopen, pathAt, 1}, errnoRofs},
		{"fd_close", []uint64{0}, errnoSuccess},
		{"fd_close", []uint64{Preopen}, errnoNotsup},
		{"fd_close", []uint64{fd}, errnoSuccess},
		{"fd_close", []uint64{fd}, errnoBadf},
	} {
		require.Equal(t, tc.errno, f.call(tc.name, tc.args...), "%s%v", tc.name, tc.args)
	}
	require.Equal(t, uint32(5), binary.LittleEndian.Uint32(f.mem[scratch+16:]), "what was written to 2 is counted")
}

func TestTable_FilesRestore(t *testing.T) {
	f := newFixture(t)
	a := f.mustOpen("lib.zip")
	f.read(a, 3)
	f.mustOpen("sub")
	files := f.tab.Files()
	require.Equal(t, []File{{FD: firstFile, Path: "lib.zip", Offset: 3}, {FD: firstFile + 1, Path: "sub", Dir: true}}, files)

	g := newFixture(t)
	require.NoError(t, g.tab.Restore(files))
	require.Equal(t, files, g.tab.Files())
	_, got := g.read(a, 3)
	require.Equal(t, "345", got, "read on from the offset carried")

	for _, tc := range []struct {
		name  string
		files []File
		msg   string
	}{
		{"stdin", []File{{FD: 0, Path: "lib.zip"}}, "not a guest file's"},
		{"preopen", []File{{FD: Preopen, Path: "."}}, "not a guest file's"},
		{"beyond", []File{{FD: firstFile + MaxOpen, Path: "lib.zip"}}, "not a guest file's"},
		{"twice", []File{{FD: 5, Path: "lib.zip"}, {FD: 5, Path: "lib.zip"}}, "open already"},
		{"missing", []File{{FD: 5, Path: "nope"}}, "cannot be opened"},
		{"unclean", []File{{FD: 5, Path: "sub/../lib.zip"}}, "not a clean path"},
		{"rooted", []File{{FD: 5, Path: "/lib.zip"}}, "not a clean path"},
		{"past the end", []File{{FD: 5, Path: "lib.zip", Offset: 11}}, "outside the file"},
		{"negative", []File{{FD: 5, Path: "lib.zip", Offset: -1}}, "outside the file"},
		{"kind", []File{{FD: 5, Path: "sub"}}, "is a directory"},
		{"dir offset", []File{{FD: 5, Path: "sub", Dir: true, Offset: 1}}, "no offset"},
		{"flags", []File{{FD: 5, Path: "lib.zip", Flags: fdflagAppend}}, "flags"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFixture(t)
			h.mustOpen("lib.zip")
			err := h.tab.Restore(tc.files)
			require.ErrorContains(t, err, tc.msg)
			require.ErrorContains(t, err, "fd ")
			require.Empty(t, h.tab.Files(), "a failed restore leaves the table empty")
		})
	}
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		dir, rel, want string
		errno          uint32
	}{
		{".", "a/b", "a/b", errnoSuccess},
		{".", "./a//b/.", "a/b", errnoSuccess},
		{".", "a/..", ".", errnoSuccess},
		{"a/b", "../c", "a/c", errnoSuccess},
		{"a/b", "../../c", "c", errnoSuccess},
		{"a/b", "../../../c", "", errnoNotcapable},
		{".", "..", "", errnoNotcapable},
		{".", "/a", "", errnoNotcapable},
	} {
		got, _, errno := resolve(tc.dir, tc.rel)
		require.Equal(t, tc.errno, errno, "%s + %s", tc.dir, tc.rel)
		require.Equal(t, tc.want, got, "%s + %s", tc.dir, tc.rel)
	}
}
