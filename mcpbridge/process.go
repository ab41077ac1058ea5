package mcpbridge

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ptcx/ptcx/internal/proc"
	"github.com/ptcx/ptcx/internal/text"
)

// Bounds of what the bridge keeps and waits for.
const (
	// stderrKeep is how much of the end of an upstream's stderr is kept.
	stderrKeep = 8 << 10
	// stderrShow is how much of it a message quotes.
	stderrShow = 1 << 10
	// stopGrace is how long Close waits after closing an upstream's stdin
	// before SIGTERM, and after SIGTERM before SIGKILL.
	stopGrace = 2 * time.Second
	// exitGrace is how long a failed call waits for an upstream that closed
	// its stdout to exit, so that its exit status can be reported.
	exitGrace = 2 * time.Second
)

// process is one running upstream: its process tree (internal/proc), our
// ends of its three pipes, and what it wrote to stderr.
type process struct {
	cmd    *exec.Cmd
	tree   *proc.Tree
	stdin  *os.File // our write end
	stdout *os.File // our read end
	stderr *tail

	exited     chan struct{} // closed once the process has been waited for
	stderrDone chan struct{} // closed once stderr reached its end
	state      *os.ProcessState
	waitErr    error
}

// startProcess starts argv as a process tree with pipes for stdin,
// stdout and stderr. The pipes are *os.File on both sides, so the process
// writes straight into them and waiting for it never waits for a copy.
func startProcess(argv []string) (*process, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	tree, err := proc.Start(cmd)
	if err != nil {
		closeAll()
		return nil, err
	}
	// The child has its own copies; ours would keep the pipes open.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	p := &process{
		cmd: cmd, tree: tree, stdin: inW, stdout: outR, stderr: &tail{keep: stderrKeep},
		exited: make(chan struct{}), stderrDone: make(chan struct{}),
	}
	go func() {
		defer close(p.stderrDone)
		defer errR.Close()
		buf := make([]byte, 4096)
		for {
			n, err := errR.Read(buf)
			p.stderr.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		p.waitErr = p.tree.Wait() // kills what it left running
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

// pid returns the process ID.
func (p *process) pid() int { return p.tree.Pid() }

// hasExited reports whether the process has exited.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill kills the process tree (the process and everything it started) and
// waits for the process. It may be called any number of times, also after
// the process exited on its own, which killed what it left behind.
func (p *process) kill() {
	p.tree.Kill()
	<-p.exited
}

// stop ends the process the way the MCP stdio transport asks: close its
// stdin, wait, SIGTERM, wait, SIGKILL. Whatever is left in its tree is
// killed in the end.
func (p *process) stop() {
	_ = p.stdin.Close()
	for _, next := range []func(){
		func() { p.tree.Signal(syscall.SIGTERM) },
		p.tree.Kill,
	} {
		t := time.NewTimer(stopGrace)
		select {
		case <-p.exited:
		case <-t.C:
			next()
		}
		t.Stop()
	}
	p.kill()
}

// closePipes closes our ends of stdin and stdout (the client session
// usually does; this is for a session that never got one).
func (p *process) closePipes() {
	_ = p.stdin.Close()
	_ = p.stdout.Close()
}

// exitText describes how the process ended ("exit status 3", "signal:
// killed") followed by the end of its stderr, waiting a little for the
// process to exit and its stderr to drain. ok is false when it has not
// exited within exitGrace.
func (p *process) exitText() (text string, ok bool) {
	t := time.NewTimer(exitGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		return "", false
	}
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
	text = "exit status unknown"
	switch {
	case p.state != nil:
		text = p.state.String()
	case p.waitErr != nil:
		text = p.waitErr.Error()
	}
	return text + p.stderrText(), true
}

// stderrText is "; stderr: ..." with the end of stderr, or "".
func (p *process) stderrText() string {
	s := p.stderr.String()
	if s == "" {
		return ""
	}
	return "; stderr: " + s
}

// tail keeps the last bytes written to it. It is safe for concurrent use.
type tail struct {
	mu   sync.Mutex
	keep int
	buf  []byte
	cut  bool // bytes were dropped from the front
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.keep; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(b), nil
}

// String returns the end of what was written, trimmed, at most stderrShow
// bytes, starting at a character boundary; "…" marks a cut.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD"))
	cut := t.cut
	if len(s) > stderrShow {
		s, cut = text.Tail(s, stderrShow), true
	}
	if cut && s != "" {
		s = "…" + s
	}
	return s
}

// startError explains why argv could not be started.
func startError(argv []string, err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return fmt.Errorf("cannot start %q: %w", argv[0], ee.Err)
	}
	return fmt.Errorf("cannot start %q: %w", argv[0], err)
}
