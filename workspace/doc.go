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
// wrote itself counts as read. One Workspace is one session: a host serving
// several sessions creates a Workspace for each (they may share a root).
//
// # bash
//
// bash is off unless Options.AllowBash is set. It runs a shell command in
// the root, in its own process group, with an environment reduced to an
// allowlist (no host tokens or keys), a timeout and an output cap. When the
// command finishes or times out the whole process group is killed, so
// background processes do not outlive it. bash is not a sandbox: the
// command runs with the host user's rights and can reach anything that user
// can; the confinement above applies to the file tools only. A process that
// leaves the process group (setsid) is not killed; the tool still returns.
//
// # Scheduling
//
// read, list, glob and grep are concurrency-safe; write, edit and bash are
// exclusive. A Workspace is safe for concurrent use by multiple goroutines.
//
// The package imports the standard library and the registry package only.
package workspace
