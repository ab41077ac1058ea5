package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed peers/driver.mjs
var driverJS []byte

// DefaultNodeTimeout bounds one job on a Node peer unless
// NodeConfig.Timeout says otherwise: the node process is killed past it and
// the job fails, saying so.
const DefaultNodeTimeout = 10 * time.Minute

// maxDriverOutput bounds what is read of a driver's output.
const maxDriverOutput = 16 << 20

// Node is a peer run by Node: ImplNodeWorker (a fresh worker_threads Worker
// per run, the tools answered by the main thread over postMessage) or
// ImplQuickJSWasi (a fresh quickjs-wasi VM per run, from one compiled
// module). Each job is one node process running peers/driver.mjs (embedded
// in this package), the job on its standard input.
type Node struct {
	name    string
	node    string // the node executable
	modules string // the directory holding node_modules/quickjs-wasi
	driver  string // driver.mjs, written to a temporary directory
	timeout time.Duration
}

// NodeConfig says where Node and the npm packages are.
type NodeConfig struct {
	// Node is the node executable; empty means "node" on PATH.
	Node string
	// Modules is the directory whose node_modules holds quickjs-wasi
	// (bench/peers after `npm ci` there, which make bench runs).
	Modules string
	// Timeout bounds one job (one node process); zero means
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
	return &Node{name: name, node: path, modules: modules, driver: driver, timeout: timeout},
		func() { _ = os.RemoveAll(dir) }
}

// Name is the peer's name.
func (n *Node) Name() string { return n.name }

// Measure runs j in a new node process.
func (n *Node) Measure(ctx context.Context, j Job) (Raw, error) {
	in, err := json.Marshal(j)
	if err != nil {
		return Raw{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	peer := "worker"
	if n.name == ImplQuickJSWasi {
		peer = "quickjs-wasi"
	}
	cmd := exec.CommandContext(ctx, n.node, "--expose-gc", n.driver, peer, n.modules)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return Raw{}, fmt.Errorf("node %s: %w (the job's bound is %s)", peer, ctx.Err(), n.timeout)
	}
	raw, err := decodeDriver(out.Bytes())
	if errors.Is(err, ErrMissing) {
		return Raw{}, err // "missing: why", as a result's note starts
	}
	if err != nil {
		return Raw{}, fmt.Errorf("node %s: %w (exit: %v; stderr: %s)", peer, err, runErr, strings.TrimSpace(errOut.String()))
	}
	return raw, nil
}

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

// limitedBuffer keeps the first maxDriverOutput bytes written to it.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxDriverOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
