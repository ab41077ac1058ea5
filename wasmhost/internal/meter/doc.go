// Package meter instruments a WebAssembly module so that its loops call a
// host import every so many iterations.
//
// wazero's WithCloseOnContextDone makes every loop header of the guest exit
// into Go to check the context, which makes an interpreter compiled to wasm
// several times slower. Instrument rewrites the module instead: every loop
// header decrements a new mutable i32 global and, when it reaches zero,
// calls an import of type () -> i32 (ptcx.poll for the ptcx guest) and
// resets the global. The host's import checks deadlines and cancellation
// and stops the guest by failing the call, so a runaway loop stops within
// Interval iterations of the deadline, at the cost of a few instructions per
// iteration.
//
// Straight-line code is bounded by the module's size. Calls are not
// counted: a function that recurses without a loop (say, twice per call)
// can run for exponential time without polling. The guest ptcx runs has no
// such recursion a program can drive (JavaScript recursion goes through the
// interpreter's loop), so the package does not pay for a check at every
// function entry; a host that runs other modules must know the same of
// them. But a single
// bulk-memory instruction (memory.fill, memory.copy, memory.init) can move
// the whole memory, hundreds of MiB, in one go. With Options.BulkBytes,
// each of these is charged against the same countdown before it runs, one
// iteration per BulkBytes bytes, and the check fires when the countdown is
// zero or less: the guest polls at least once every Interval loop
// iterations or Interval*BulkBytes bytes moved (or a mix), plus at most one
// instruction. Without it, they are not charged. memory.grow, table.fill,
// table.copy and table.init, and host imports, run without a check, and so
// does wazero's own work in memory.grow, which may allocate and copy the
// whole memory.
//
// The package decodes the binary format itself (standard library only):
// leb.go reads and writes LEB128, module.go and sections.go decode the
// sections, code.go the instructions, instrument.go and emit.go build the
// output.
package meter
