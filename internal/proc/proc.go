package proc

import (
	"errors"
	"os"
	"os/exec"
	"sync"
)

// Mechanism is how a Tree's processes are held together so that they can be
// killed together. Active reports the one in force.
type Mechanism int

// The mechanisms, weakest first; the package comment says what each
// guarantees.
const (
	// MechanismNone: tool process trees are not contained on this OS;
	// only the direct child is killed.
	MechanismNone Mechanism = iota
	// MechanismProcessGroup: the tree is a process group; a process that
	// calls setsid or setpgid escapes it.
	MechanismProcessGroup
	// MechanismPIDNamespace: the tree is a PID namespace whose init is the
	// tool's process.
	MechanismPIDNamespace
	// MechanismCgroup: the tree is a cgroup v2 leaf of its own.
	MechanismCgroup
)

// String is the mechanism's short name.
func (m Mechanism) String() string {
	switch m {
	case MechanismProcessGroup:
		return "process-group"
	case MechanismPIDNamespace:
		return "pid-namespace"
	case MechanismCgroup:
		return "cgroup"
	default:
		return "none"
	}
}

// Contained reports whether no process of a tree can escape it (setsid, a
// double fork): true for a cgroup and a PID namespace.
func (m Mechanism) Contained() bool {
	return m == MechanismCgroup || m == MechanismPIDNamespace
}

// Describe says in one sentence what the mechanism guarantees, for a host
// to report (for example at start-up).
func (m Mechanism) Describe() string {
	switch m {
	case MechanismCgroup:
		return "tool processes run in a cgroup of their own each and are killed with everything they started"
	case MechanismPIDNamespace:
		return "tool processes run in a PID namespace of their own each and are killed with everything they started"
	case MechanismProcessGroup:
		return "tool processes run in a process group of their own each; a process that leaves its group (setsid) is not killed with it"
	default:
		return "tool process trees are not contained on this OS: only a tool's own process is killed, not what it started"
	}
}

// how is a mechanism with its variant.
type how struct {
	m Mechanism
	// user: a PID namespace needs a user namespace too (ptcx is not
	// privileged enough for a PID namespace alone).
	user bool
}

var active struct {
	once sync.Once
	h    how
}

// Active returns the mechanism in force for this process. It is found
// once, on first use (by Active or Start), by trying the strongest first.
func Active() Mechanism { return activeHow().m }

func activeHow() how {
	active.once.Do(func() { active.h = detect() })
	return active.h
}

// container is what a mechanism does for one tree.
type container interface {
	// signal sends sig to every process of the tree it can reach.
	signal(sig os.Signal)
	// kill sends SIGKILL to every process of the tree.
	kill()
	// release runs once the direct child has been waited for and the
	// tree killed: it frees what the tree held.
	release()
}

// Tree is a started process and every process it starts.
type Tree struct {
	cmd *exec.Cmd
	c   container

	mu    sync.Mutex
	ended bool // Wait has killed the tree
}

// ErrSysProcAttr is returned by Start for a command whose SysProcAttr is
// set: Start sets it itself.
var ErrSysProcAttr = errors.New("proc: the command's SysProcAttr must be nil: Start sets it to contain the process tree")

// Start starts cmd (not yet started, SysProcAttr nil) as the root of a new
// tree, contained by the active mechanism. Its errors are cmd.Start's, or
// say which part of the containment could not be set up.
func Start(cmd *exec.Cmd) (*Tree, error) {
	return startWith(activeHow(), cmd)
}

func startWith(h how, cmd *exec.Cmd) (*Tree, error) {
	if cmd.SysProcAttr != nil {
		return nil, ErrSysProcAttr
	}
	c, err := start(h, cmd)
	if err != nil {
		return nil, err
	}
	return &Tree{cmd: cmd, c: c}, nil
}

// Pid is the direct child's process ID (as the host sees it).
func (t *Tree) Pid() int { return t.cmd.Process.Pid }

// Wait waits for the direct child (cmd.Wait), kills every process of the
// tree still alive and frees the tree: when Wait returns, nothing the tree
// started runs (within the guarantee of the mechanism). On Linux the rest is
// killed as soon as the child has exited, before cmd.Wait reaps it, so
// output pipes a leftover process holds close and cmd.Wait does not wait for
// them. It returns cmd.Wait's error. Call it exactly once.
func (t *Tree) Wait() error {
	early := waitExit(t.cmd.Process.Pid)
	if early {
		t.end()
	}
	err := t.cmd.Wait()
	if !early {
		t.end()
	}
	t.c.release()
	return err
}

// end kills what is left of the tree; later Kill and Signal do nothing.
func (t *Tree) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	t.c.kill()
}

// Kill sends SIGKILL to every process of the tree. It returns at once; Wait
// returns once the direct child is dead. It may be called any number of
// times, from any goroutine; after Wait it does nothing.
func (t *Tree) Kill() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.c.kill()
	}
}

// Signal sends sig to every process of the tree it can reach (a PID
// namespace's init ignores a signal it has no handler for, except SIGKILL).
// After Wait it does nothing.
func (t *Tree) Signal(sig os.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.c.signal(sig)
	}
}
