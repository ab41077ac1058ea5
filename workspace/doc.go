// Package workspace provides ptcx's built-in tools over one directory tree,
// the workspace: read, write, edit, list, glob, grep and (only when enabled)
// bash. Each is a registry.Tool with an input and an output JSON Schema, so
// the generated TypeScript SDK types both its arguments and its result.
//
// # Confinement
//
// Every path a tool receives is relative to the workspace root; an absolute
// path is accepted when it lies inside the root. A path that leaves the root
// is refused with "path ... escapes the workspace", whether it does so with
// "..", as an absolute path, or through a symbolic link at any component
// (including the last one, and links that dangle). Symbolic links that stay
// inside the root are followed. The check is done twice: the package
// resolves every path itself, link by link, to give a precise message, and
// every file is then opened through an os.Root, so the kernel refuses an
// escape even if the tree changes between the check and the use.
//
// A regular file with more than one hard link is refused by read, grep
// (a directory search skips it), edit and write (onto an existing file):
// a hard link made inside the root to a file outside is indistinguishable
// from any other file, so a link count above one may mean an outside file.
// A file on another file system than the root (a mount point inside the
// tree) is refused the same way. Both checks are made on the open file, on
// Unix; other systems do not report link counts through os.Stat, and there
// these files are not refused.
//
// File names are shown to the model as they are, or quoted with Go's
// escapes (strconv.Quote) when they hold a newline, another control
// character or invalid UTF-8; the JSON values hold the real names.
//
// Messages are written for the model: they say what went wrong and what to
// do, name paths as the model gave them, and never reveal a host path
// outside the workspace.
//
// # Read before write
//
// A Workspace remembers which files it has read (by their resolved path,
// size and modification time). write and edit refuse to change an existing
// file that this Workspace has not read, or that changed on disk since it
// was last read; they may always create a new file. A file the Workspace
// wrote itself counts as read. This record is the workspace state, and one
// Workspace holds one: a host serving several conversations creates a
// Workspace for each (they may share a root; ptcx serve keeps one per
// request's workspace_state name).
//
// # bash
//
// bash is off unless Options.AllowBash is set. It runs a shell command in
// the root as an internal/proc process tree, with an environment reduced to
// an allowlist (no host tokens or keys), a timeout and an output cap. When
// the command finishes or times out the whole tree is killed, so background
// processes do not outlive it (docs/security.md, "Tool processes", says how
// strongly each platform contains it). bash is not a sandbox: the command
// runs with the host user's rights and can reach anything that user can;
// the confinement above applies to the file tools only.
//
// # Bounds
//
// Nothing a call sends makes a tool do unbounded work: paths (also once
// their symbolic links are followed), grep's and glob's patterns, the work
// of matching one line, the directory entries a walk reads and its depth,
// and the files write and edit handle are all bounded, and edit computes
// the size of its result before building it. limits.go states each bound
// and why; docs/security.md ("Built-in workspace tools") has the table.
// Resolving a path costs a few system calls per component, and every loop
// checks the call's context, so a cancelled tool returns at once. Past a
// bound a call fails with ErrLimit or ErrTooLarge, or, for a walk, stops
// and says so in a truncated result.
//
// # Scheduling
//
// read, list, glob and grep are concurrency-safe; write, edit and bash are
// exclusive. A Workspace is safe for concurrent use by multiple goroutines.
//
// The package imports the standard library, registry, internal/proc (bash's
// process tree) and internal/text.
package workspace
