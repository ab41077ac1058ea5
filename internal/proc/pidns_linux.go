package proc

import (
	"os"
	"syscall"
)

// pidnsAttr sets attr to start the child as the init of a new PID
// namespace; with user set, in a new user namespace too, mapping the host's
// own uid and gid (so a non-root host needs no privilege, and the child
// keeps no capability past its exec).
func pidnsAttr(attr *syscall.SysProcAttr, user bool) {
	attr.Cloneflags = syscall.CLONE_NEWPID
	if user {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
}

// probePIDNamespace finds whether a PID namespace can be made, alone or
// with a user namespace, and which.
func probePIDNamespace() (user bool, err error) {
	attr := &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		pidnsAttr(attr, false)
		if probeClone(attr) == nil {
			return false, nil
		}
	}
	attr = &syscall.SysProcAttr{}
	pidnsAttr(attr, true)
	return true, probeClone(attr)
}

// pidns is a tree held together by a PID namespace whose init is the
// direct child: when it dies, the kernel kills every process in it. The
// child also leads a process group, so Signal reaches its processes even
// when init has no handler for the signal.
type pidns struct {
	init *os.Process
	group
}

// kill kills init (SIGKILL from the parent namespace is always delivered),
// and with it the namespace.
func (p pidns) kill() {
	_ = p.init.Kill()
	p.group.kill()
}

func (p pidns) signal(sig os.Signal) {
	_ = p.init.Signal(sig)
	p.group.signal(sig)
}

// release has nothing left to do: init has been waited for, and a
// namespace's init exits only once every process in it is gone.
func (pidns) release() {}
