package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// detect picks the strongest mechanism that works here: a cgroup v2 leaf,
// else a PID namespace, else a process group. Finding that a cgroup works
// also removes the leaves that dead ptcx processes left.
func detect() how {
	if dir, err := ownCgroupDir(); err == nil && probeCgroup(dir) == nil {
		cgroupParent = dir
		sweepStale(dir)
		return how{m: MechanismCgroup}
	}
	if user, err := probePIDNamespace(); err == nil {
		return how{m: MechanismPIDNamespace, user: user}
	}
	return how{m: MechanismProcessGroup}
}

// start starts cmd contained by m. The child leads a new process group and
// gets SIGKILL when ptcx dies (see the package comment); it is started from
// the spawner's thread.
func start(h how, cmd *exec.Cmd) (container, error) {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var l *leaf
	switch h.m {
	case MechanismCgroup:
		if Active() != MechanismCgroup {
			return nil, errors.New("proc: no cgroup v2 can be used here")
		}
		var err error
		if l, err = newLeaf(cgroupParent); err != nil {
			return nil, err
		}
		attr.UseCgroupFD, attr.CgroupFD = true, l.fd
	case MechanismPIDNamespace:
		pidnsAttr(attr, h.user)
	}
	cmd.SysProcAttr = attr
	var err error
	onSpawnThread(func() { err = cmd.Start() })
	if l != nil {
		l.closeFD()
	}
	if err != nil {
		if l != nil {
			l.remove()
		}
		return nil, err
	}
	g := group{pgid: cmd.Process.Pid}
	switch h.m {
	case MechanismCgroup:
		return l, nil
	case MechanismPIDNamespace:
		return pidns{init: cmd.Process, group: g}, nil
	default:
		return g, nil
	}
}
