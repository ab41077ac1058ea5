// Package proc is the one owner of starting and killing a tool's process
// tree: the bash tool (workspace), command tools (toolsfile) and the MCP
// bridge's upstream servers (mcpbridge) start their processes with Start and
// end them with a Tree's Kill, Signal and Wait. It imports only the standard
// library.
//
// # What "killed with everything it started" means here
//
// A Tree is a process and every process it starts. When the process ends
// (Wait returns), or Kill is called, every process of the tree is killed, so
// nothing a tool started outlives it. How strongly that holds depends on the
// mechanism in force, chosen once per ptcx process (Active reports it), the
// strongest available first:
//
//   - MechanismCgroup (Linux, cgroup v2 writable, kernel 5.14 or later):
//     each tree gets its own cgroup, a leaf under the ptcx process's cgroup
//     named ptcx-<pid>-<n>. The process is cloned straight into it
//     (clone3 CLONE_INTO_CGROUP), so there is no moment at which it runs
//     outside. A process cannot leave a cgroup without write access to
//     another one, so setsid, double forks and new process groups do not
//     escape. Kill writes cgroup.kill, which the kernel applies to every
//     process in it at once, even one that is forking; the leaf is removed
//     once empty. Works for root, and for a non-root host given a delegated
//     cgroup (systemd's Delegate=yes, or `systemd-run --user --scope -p
//     Delegate=yes`).
//   - MechanismPIDNamespace (Linux, when no cgroup can be made): each tree
//     gets a new PID namespace (CLONE_NEWPID, with CLONE_NEWUSER mapping the
//     host's own uid and gid when ptcx is not root). The tool's process is
//     the namespace's init: when it exits or is killed the kernel kills every
//     process in the namespace, and nothing can leave a PID namespace. The
//     tool sees it: its own pid is 1 ($$ and $! are the namespace's pids),
//     a signal it has no handler for is not delivered to it from inside its
//     namespace (`kill -TERM $$` does nothing) nor, but for SIGKILL, from
//     outside (Signal also sends it to the whole process group, which
//     reaches the rest), orphans of the tree are reparented to it, and pids
//     it reads from /proc are the host's, not its namespace's.
//   - MechanismProcessGroup (Linux without either, macOS and other Unix
//     systems): the process leads a new process group, and Kill signals the
//     group. This is the weaker guarantee: a process that calls setsid or
//     setpgid (a daemon, `setsid cmd &`, a double fork into a new session)
//     leaves the group and is not killed. Output pipes such a process keeps
//     open do not hang the caller (each caller stops reading after a grace).
//   - MechanismNone (Windows and other systems): tool process trees are not
//     contained on this OS; Kill kills the direct child only.
//
// Killed processes whose parent died first are reparented to the system's
// init (or a subreaper above ptcx), which reaps them; in a PID namespace its
// init does. Wait reaps the direct child.
//
// Detection (Active) costs one probe process that never runs (its exec
// fails on purpose) per mechanism tried, once per ptcx process. A tree in a
// cgroup costs a mkdir, a write to cgroup.kill and an rmdir more than one in
// a process group.
//
// # When ptcx itself dies
//
// On Linux the tool's direct child gets PR_SET_PDEATHSIG=SIGKILL: if the
// ptcx process dies, even of SIGKILL, the kernel kills that child. The death
// signal fires when the *thread* that forked the child exits, and Go may end
// a thread whose goroutine exits while locked to it (runtime.LockOSThread),
// so every tree is started from one goroutine locked to its thread for the
// life of the process: the signal fires only when ptcx exits. What else dies:
//
//   - MechanismPIDNamespace: everything, since the namespace's init died.
//   - MechanismCgroup: the direct child only; what it started stays in its
//     cgroup until the next ptcx process in the same cgroup finds its
//     mechanism (its first Start or Active), which kills and removes the
//     cgroups of ptcx processes that no longer run.
//   - MechanismProcessGroup: the direct child only (on Linux; on other
//     systems not even that).
//
// # Safe use
//
// Start may be called from any goroutine; the first call starts the one
// goroutine (and thread) trees are started from, which lives as long as the
// process. A Tree's methods are safe for concurrent use; Wait must be called
// exactly once.
package proc
