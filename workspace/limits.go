package workspace

import "github.com/ptcx/ptcx/internal/regexbound"

// Bounds on the host work one tool call may ask for. They are not options:
// each is far above what a legitimate call needs and low enough that the
// work it allows is small for the host (memory, CPU, file descriptors), so
// a program cannot make a built-in tool exhaust the host. A call past a
// bound fails with a message that states the bound and what to do; a walk
// that reaches the entry bound stops, and its result says it was truncated.
const (
	// maxPathBytes bounds a path argument, in bytes: PATH_MAX on Linux.
	maxPathBytes = 4096
	// maxPathDepth bounds the components of a path argument and of the path
	// it resolves to, symbolic links followed; glob and grep do not search
	// directories deeper than this below the root. Each component costs
	// system calls, so the depth bounds the work of resolving one path.
	maxPathDepth = 256
	// maxPatternBytes bounds grep's regular expression, in bytes, and
	// maxRegexpSize its compiled size, in instructions with its repetitions
	// expanded ("x{1000}" is 1000): the bounds of every expression the host
	// compiles for someone it does not trust (internal/regexbound). Compiling
	// costs memory in proportion to the pattern (an 8 MB pattern asked for
	// 1.1 GB).
	maxPatternBytes = regexbound.MaxPatternBytes
	maxRegexpSize   = regexbound.MaxSize
	// maxMatchWork bounds the work of matching one line, which cannot be
	// interrupted: the bytes searched times the expression's size. An
	// expression of up to 256 instructions searches a line's first 64 KiB
	// (grepLineBytes), a larger one less (8 KiB at maxRegexpSize). Measured
	// on a loaded 2-core machine, the worst line ("(?:a?){682}b" on a
	// 64 KiB line of "a") took 2.45 s searched whole, 0.72 s in 8 KiB.
	maxMatchWork = grepLineBytes * 256
	// maxGlobBytes bounds a glob pattern (glob's pattern, grep's glob), in
	// bytes: every entry of a walk is matched against it.
	maxGlobBytes = 1 << 10
	// maxScanEntries bounds the directory entries one list, glob or grep
	// call reads. Memory and time grow with it; past it the call stops and
	// says so, so a directory of a million entries costs a bounded amount.
	maxScanEntries = 100_000
	// maxFileBytes bounds the files write creates and edit loads or
	// produces (32 MiB).
	maxFileBytes = 32 << 20
	// checkBytes is how much a tool reads between two checks of its
	// context, so a cancelled call stops within about a millisecond of
	// reading; loops over lines or entries also check every checkLines.
	checkBytes = 1 << 20
	checkLines = 4096
)
