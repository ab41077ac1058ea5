package wasifs

// WASI preview1's errno values (wasi_snapshot_preview1), those this file
// system returns.
const (
	errnoSuccess     = 0
	errnoBadf        = 8
	errnoFault       = 21
	errnoInval       = 28
	errnoIo          = 29
	errnoIsdir       = 31
	errnoMfile       = 33
	errnoNametoolong = 37
	errnoNoent       = 44
	errnoNotdir      = 54
	errnoNotsup      = 58
	errnoRofs        = 69
	errnoSpipe       = 70
	errnoNotcapable  = 76
)

// File types (filetype).
const (
	typeCharDevice = 2
	typeDirectory  = 3
	typeRegular    = 4
)

// Rights (rights): bit n is the nth right of wasi_snapshot_preview1.
const (
	rightFdDatasync        = 1 << 0
	rightFdRead            = 1 << 1
	rightFdSeek            = 1 << 2
	rightFdstatSetFlags    = 1 << 3
	rightFdTell            = 1 << 5
	rightFdWrite           = 1 << 6
	rightFdAdvise          = 1 << 7
	rightFdAllocate        = 1 << 8
	rightPathOpen          = 1 << 13
	rightFdReaddir         = 1 << 14
	rightPathReadlink      = 1 << 15
	rightPathFilestatGet   = 1 << 18
	rightFdFilestatGet     = 1 << 21
	rightFdFilestatSetSize = 1 << 22
	rightsAll              = 1<<30 - 1 // the 30 rights of preview1

	// rightsWrite are the rights that open a file for writing: wasi-libc
	// asks for them for O_WRONLY and O_RDWR, never for O_RDONLY (it asks
	// for every other right the directory's inheriting rights allow).
	rightsWrite = rightFdDatasync | rightFdWrite | rightFdAllocate | rightFdFilestatSetSize
	// rightsFile are a file's rights: reading it.
	rightsFile = rightFdRead | rightFdSeek | rightFdTell | rightFdAdvise | rightFdstatSetFlags | rightFdFilestatGet
	// rightsDir are a directory's rights: opening, listing and statting
	// what is in it.
	rightsDir = rightPathOpen | rightFdReaddir | rightPathReadlink | rightPathFilestatGet | rightFdFilestatGet |
		rightFdstatSetFlags
)

// Open flags (oflags) and fd flags (fdflags).
const (
	oflagCreat     = 1 << 0
	oflagDirectory = 1 << 1
	oflagExcl      = 1 << 2
	oflagTrunc     = 1 << 3

	fdflagAppend   = 1 << 0
	fdflagDsync    = 1 << 1
	fdflagNonblock = 1 << 2
	fdflagRsync    = 1 << 3
	fdflagSync     = 1 << 4
	fdflagsWrite   = fdflagAppend | fdflagDsync | fdflagRsync | fdflagSync
)
