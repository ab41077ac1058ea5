package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// emptyWait bounds how long releasing a cgroup waits for its killed
// processes to be gone before removing it; one stuck in the kernel (an
// uninterruptible wait) makes it give up and leave the cgroup, which the
// next ptcx process in this cgroup removes (sweepStale).
const emptyWait = 5 * time.Second

// cgroupParent is the directory the leaves are made in: the ptcx process's
// own cgroup v2, found by detect.
var cgroupParent string

// leafSeq numbers this process's leaves.
var leafSeq atomic.Uint64

// leafPrefix starts every leaf's name: ptcx-<pid>-<n>.
const leafPrefix = "ptcx-"

// leaf is one tree's cgroup.
type leaf struct {
	path string
	fd   int // the directory, open until the child is cloned into it
}

// ownCgroupDir finds this process's cgroup v2 directory: its path in
// /proc/self/cgroup ("0::/path") under a cgroup2 mount that holds it.
func ownCgroupDir() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	own := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	if own == "" {
		return "", errors.New("this process is in no cgroup v2 (only cgroup v1 is in use)")
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(mounts))
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source options
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if !ok || len(fields) < 5 || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		root, point := fields[3], fields[4]
		rel, ok := strings.CutPrefix(own, root)
		if root == "/" {
			rel, ok = own, true
		}
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			continue
		}
		return filepath.Join(point, rel), nil
	}
	return "", fmt.Errorf("no cgroup2 mount holds this process's cgroup %s", own)
}

// newLeaf makes a new leaf cgroup under parent and opens it.
func newLeaf(parent string) (*leaf, error) {
	name := fmt.Sprintf("%s%d-%d", leafPrefix, os.Getpid(), leafSeq.Add(1))
	path := filepath.Join(parent, name)
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create a cgroup for the tool's processes: %w", err)
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("cannot open the cgroup for the tool's processes: %w", err)
	}
	return &leaf{path: path, fd: fd}, nil
}

// closeFD closes the directory once the child is in the cgroup.
func (l *leaf) closeFD() {
	if l.fd >= 0 {
		_ = syscall.Close(l.fd)
		l.fd = -1
	}
}

// kill kills every process in the cgroup at once: cgroup.kill (Linux 5.14)
// cannot be outrun by a process that forks.
func (l *leaf) kill() {
	_ = os.WriteFile(filepath.Join(l.path, "cgroup.kill"), []byte("1"), 0)
}

// signal sends sig to each process in the cgroup; one that forks meanwhile
// may have a child that misses it (kill does not).
func (l *leaf) signal(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return
	}
	data, err := os.ReadFile(filepath.Join(l.path, "cgroup.procs"))
	if err != nil {
		return
	}
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, s)
		}
	}
}

// release waits (up to emptyWait) for the killed cgroup to be empty and
// removes it.
func (l *leaf) release() {
	l.closeFD()
	l.remove()
}

// remove waits for the cgroup to be empty and removes it.
func (l *leaf) remove() {
	pause := 100 * time.Microsecond
	for deadline := time.Now().Add(emptyWait); populated(l.path) && time.Now().Before(deadline); pause = min(2*pause, 10*time.Millisecond) {
		time.Sleep(pause)
	}
	_ = os.Remove(l.path)
}

// populated reports whether a process lives in the cgroup at path. A
// cgroup whose events cannot be read is not waited for (remove would wait
// its whole emptyWait for nothing): removing it then fails, and the next
// sweep tries again.
func populated(path string) bool {
	data, err := os.ReadFile(filepath.Join(path, "cgroup.events"))
	if err != nil {
		return false
	}
	return !bytes.Contains(data, []byte("populated 0"))
}

// probeCgroup checks that trees can be contained in leaves under parent: a
// leaf can be made, has cgroup.kill, and a child can be cloned into it. The
// probe child execs a path that cannot exist, so nothing runs: ENOTDIR from
// the exec proves the clone worked.
func probeCgroup(parent string) error {
	l, err := newLeaf(parent)
	if err != nil {
		return err
	}
	defer l.remove()
	defer l.closeFD()
	if _, err := os.Stat(filepath.Join(l.path, "cgroup.kill")); err != nil {
		return fmt.Errorf("the kernel has no cgroup.kill (Linux 5.14 or later): %w", err)
	}
	return probeClone(&syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: l.fd})
}

// probeClone starts a child with attr that execs a path that cannot exist.
// It returns nil when the exec, not the clone, failed.
func probeClone(attr *syscall.SysProcAttr) error {
	_, err := syscall.ForkExec("/dev/null/ptcx-probe", []string{"ptcx-probe"}, &syscall.ProcAttr{Sys: attr})
	if errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err == nil {
		return errors.New("the probe unexpectedly started")
	}
	return err
}

// sweepStale kills and removes the leaves under parent left by ptcx
// processes that no longer run (killed before they could remove them).
func sweepStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		owner, ok := leafOwner(e.Name())
		if !ok || !e.IsDir() || (owner != os.Getpid() && running(owner)) {
			continue
		}
		l := &leaf{path: filepath.Join(parent, e.Name()), fd: -1}
		l.kill()
		l.remove()
	}
}

// leafOwner parses the pid out of a leaf's name, ptcx-<pid>-<n>.
func leafOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, leafPrefix)
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if _, err2 := strconv.ParseUint(n, 10, 64); err != nil || err2 != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// running reports whether a process with pid exists.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
