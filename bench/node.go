package bench

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed peers/driver.mjs
var driverJS []byte

// DefaultNodeTimeout bounds one job on a Node peer unless
// NodeConfig.Timeout says otherwise: its node process is stopped past it and
// the job fails, saying so.
const DefaultNodeTimeout = 10 * time.Minute

// maxDriverOutput bounds what is read of a driver's output.
const maxDriverOutput = 16 << 20

// Node is a peer run by Node: ImplNodeWorker (a fresh worker_threads Worker
// per run, the tools answered by the main thread over postMessage) or
// ImplQuickJSWasi (a fresh quickjs-wasi VM per run, from one compiled
// module). A node process runs peers/driver.mjs (embedded in this
// package), the jobs one JSON line each on its standard input: one process
// serves the jobs of one workload (its rounds, bench.Run), so that its
// compiled module and its JIT stay warm between rounds as ptcx's and goja's
// do, and the next workload starts a new one, so that none measures another
// workload's garbage. Measure is not safe for concurrent use; Close the peer
// with the function NewNode returns.
type Node struct {
	name    string
	node    string // the node executable
	modules string // the directory holding node_modules/quickjs-wasi
	driver  string // driver.mjs, written to a temporary directory
	timeout time.Duration

	proc *driverProc // the running driver, or nil
}

// driverProc is a running driver: the workload it serves, its input, and
// its lines of output.
type driverProc struct {
	workload string
	cmd      *exec.Cmd
	in       io.WriteCloser
	lines    chan driverRead // one per line, closed at the output's end
	errOut   *limitedBuffer
}

// driverRead is one line of a driver's output, or why there is none.
type driverRead struct {
	line []byte
	err  error
}

// NodeConfig says where Node and the npm packages are.
type NodeConfig struct {
	// Node is the node executable; empty means "node" on PATH.
	Node string
	// Modules is the directory whose node_modules holds quickjs-wasi
	// (bench/peers after `npm ci` there, which make bench runs).
	Modules string
	// Timeout bounds one job (one round of a workload); zero means
	// DefaultNodeTimeout.
	Timeout time.Duration
}

// NewNode returns the Node peer named name (ImplNodeWorker or
// ImplQuickJSWasi). When it cannot run here (no node, no quickjs-wasi)
// it returns Missing with the reason, never an error; Close the peer.
func NewNode(name string, cfg NodeConfig) (Impl, func()) {
	none := func() {}
	if name != ImplNodeWorker && name != ImplQuickJSWasi {
		return Missing(name, fmt.Sprintf("no Node peer %q: want %s or %s", name, ImplNodeWorker, ImplQuickJSWasi)), none
	}
	bin := cfg.Node
	if bin == "" {
		bin = "node"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return Missing(name, fmt.Sprintf("no Node (%s: %v); install it (apt-get install nodejs npm; make bench does)", bin, err)), none
	}
	if name == ImplQuickJSWasi {
		pkg := filepath.Join(cfg.Modules, "node_modules", "quickjs-wasi", "package.json")
		if _, err := os.Stat(pkg); err != nil {
			return Missing(name, fmt.Sprintf("no %s: run npm ci in bench/peers (make bench does)", pkg)), none
		}
	}
	dir, err := os.MkdirTemp("", "ptcx-bench-")
	if err != nil {
		return Missing(name, fmt.Sprintf("no temporary directory for the driver: %v", err)), none
	}
	driver := filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(driver, driverJS, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return Missing(name, fmt.Sprintf("writing the driver: %v", err)), none
	}
	modules, _ := filepath.Abs(cfg.Modules)
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultNodeTimeout
	}
	n := &Node{name: name, node: path, modules: modules, driver: driver, timeout: timeout}
	return n, func() {
		n.stop()
		_ = os.RemoveAll(dir)
	}
}

// Name is the peer's name.
func (n *Node) Name() string { return n.name }

// Measure runs j in the node process of j's workload, started for it.
// A job that fails to answer in time, or whose process ends, takes the
// process down with it: the next job starts a new one.
func (n *Node) Measure(ctx context.Context, j Job) (Raw, error) {
	switch j.Kind {
	case Session, AfterSession:
		// #36 names goja keeping its state as the sessions' baseline; a
		// Node peer would need a driver of its own for them.
		return Raw{}, fmt.Errorf("%w: %s has no driver for REPL sessions (goja is their baseline)", ErrUnsupported, n.name)
	case ServeLatency, ServeThroughput, ServeClientTool, Parked:
		return Raw{}, fmt.Errorf("%w: a %s workload measures ptcx serve over HTTP, which %s has no counterpart of",
			ErrUnsupported, j.Kind, n.name)
	}
	in, err := json.Marshal(j)
	if err != nil {
		return Raw{}, err
	}
	peer := n.peer()
	if n.proc != nil && n.proc.workload != j.Workload {
		n.stop()
	}
	if n.proc == nil {
		if n.proc, err = n.start(j.Workload); err != nil {
			return Raw{}, fmt.Errorf("node %s: %w", peer, err)
		}
	}
	proc := n.proc
	timer := time.NewTimer(n.timeout)
	defer timer.Stop()
	if _, err := proc.in.Write(append(in, '\n')); err != nil {
		return Raw{}, n.fail(fmt.Errorf("node %s: writing the job: %w", peer, err))
	}
	var read driverRead
	select {
	case r, ok := <-proc.lines:
		if !ok {
			return Raw{}, n.fail(fmt.Errorf("node %s: the driver ended before answering", peer))
		}
		read = r
	case <-timer.C:
		return Raw{}, n.fail(fmt.Errorf("node %s: %w (the job's bound is %s)", peer, context.DeadlineExceeded, n.timeout))
	case <-ctx.Done():
		return Raw{}, n.fail(fmt.Errorf("node %s: %w", peer, ctx.Err()))
	}
	if read.err != nil {
		return Raw{}, n.fail(fmt.Errorf("node %s: %w", peer, read.err))
	}
	raw, err := decodeDriver(read.line)
	if errors.Is(err, ErrMissing) {
		return Raw{}, err // "missing: why", as a result's note starts
	}
	if err != nil {
		return Raw{}, n.fail(fmt.Errorf("node %s: %w", peer, err))
	}
	return raw, nil
}

// peer is the driver's name of the peer.
func (n *Node) peer() string {
	if n.name == ImplQuickJSWasi {
		return "quickjs-wasi"
	}
	return "worker"
}

// start starts a driver for workload's jobs.
func (n *Node) start(workload string) (*driverProc, error) {
	cmd := exec.Command(n.node, "--expose-gc", n.driver, n.peer(), n.modules)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &driverProc{workload: workload, cmd: cmd, in: in, lines: make(chan driverRead, 1), errOut: &limitedBuffer{}}
	cmd.Stderr = p.errOut
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go p.read(out)
	return p, nil
}

// read sends each line of the driver's output, up to maxDriverOutput
// bytes, then closes lines.
func (p *driverProc) read(out io.Reader) {
	defer close(p.lines)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), maxDriverOutput)
	for sc.Scan() {
		p.lines <- driverRead{line: bytes.Clone(sc.Bytes())}
	}
	if err := sc.Err(); err != nil {
		p.lines <- driverRead{err: fmt.Errorf("reading the driver's output: %w", err)}
	}
}

// fail stops the driver after err, which it returns with the driver's
// standard error.
func (n *Node) fail(err error) error {
	errOut := n.stop()
	if errOut != "" {
		return fmt.Errorf("%w (stderr: %s)", err, errOut)
	}
	return err
}

// stop ends the running driver, if any, and returns its standard error.
func (n *Node) stop() string {
	p := n.proc
	if p == nil {
		return ""
	}
	n.proc = nil
	_ = p.in.Close() // the driver ends at the end of its input
	done := make(chan struct{})
	go func() {
		for range p.lines { // until the output's end, so that Wait may close it
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-done
	}
	_ = p.cmd.Wait()
	return strings.TrimSpace(p.errOut.String())
}

// stopGrace is how long a driver has to end once its input has: a driver
// still running a job past it is killed.
const stopGrace = 2 * time.Second

// driverLine is what driver.mjs prints: a Raw, or why there is none
// (Missing: the peer is absent here; Unsupported: it cannot measure the
// job's kind).
type driverLine struct {
	Raw
	Error       string `json:"error"`
	Missing     string `json:"missing"`
	Unsupported string `json:"unsupported"`
}

// decodeDriver reads the driver's one line.
func decodeDriver(out []byte) (Raw, error) {
	line := bytes.TrimSpace(out)
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if len(line) == 0 {
		return Raw{}, errors.New("the driver printed nothing")
	}
	var d driverLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Raw{}, fmt.Errorf("the driver's line %.200q: %w", line, err)
	}
	switch {
	case d.Missing != "":
		return Raw{}, fmt.Errorf("%w: %s", ErrMissing, d.Missing)
	case d.Unsupported != "":
		return Raw{}, fmt.Errorf("%w: %s", ErrUnsupported, d.Unsupported)
	case d.Error != "":
		return Raw{}, errors.New(d.Error)
	case len(d.Samples) == 0:
		return Raw{}, errors.New("the driver measured no samples")
	}
	return d.Raw, nil
}

// limitedBuffer keeps the first maxDriverOutput bytes written to it. The
// buffer is a field, not embedded: an embedded bytes.Buffer's ReadFrom
// would let io.Copy (exec's copy of a process's output) fill it past the
// bound without calling Write.
type limitedBuffer struct{ buf bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxDriverOutput - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Bytes and String are what was kept.
func (b *limitedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *limitedBuffer) String() string { return b.buf.String() }
