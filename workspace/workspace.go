package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

// Defaults for the zero fields of Options.
const (
	// DefaultBashTimeout bounds one bash command; arguments may lower it.
	DefaultBashTimeout = 30 * time.Second
	// DefaultMaxReadBytes is the most text one read returns.
	DefaultMaxReadBytes = 256 << 10
	// DefaultMaxOutputBytes is the most stdout plus stderr bash keeps.
	DefaultMaxOutputBytes = 64 << 10
	// DefaultMaxMatches caps the matches of grep and glob and the entries of
	// list.
	DefaultMaxMatches = 200
)

// Options configures a Workspace. The zero value means the documented
// defaults; a zero or negative field means its default.
type Options struct {
	// AllowBash adds the bash tool. Off by default: bash runs with the host
	// user's rights and is not confined to the workspace.
	AllowBash bool
	// BashTimeout bounds one bash command (default 30s). A call may ask for
	// less with timeout_ms, never more.
	BashTimeout time.Duration
	// MaxReadBytes is the most text one read returns (default 256 KiB). A
	// larger file can only be read in line ranges that fit.
	MaxReadBytes int64
	// MaxOutputBytes caps bash's stdout and stderr together (default
	// 64 KiB); the prefix is kept and the result says it was truncated.
	MaxOutputBytes int
	// MaxMatches caps grep matches, glob matches and list entries (default
	// 200); the result says when it was truncated.
	MaxMatches int
}

func (o Options) withDefaults() Options {
	if o.BashTimeout <= 0 {
		o.BashTimeout = DefaultBashTimeout
	}
	if o.MaxReadBytes <= 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.MaxMatches <= 0 {
		o.MaxMatches = DefaultMaxMatches
	}
	return o
}

// Workspace is a directory tree and the tools that work on it. It is safe
// for concurrent use. Its read-before-write state (the workspace state)
// belongs to one conversation: create one Workspace per conversation.
type Workspace struct {
	root    string   // absolute and free of symbolic links
	alias   string   // the root as given, made absolute: also accepted as a prefix
	fsys    *os.Root // every file operation goes through it
	opts    Options
	shell   string
	dev     *uint64 // the root's device, where the system reports it
	scan    int     // maxScanEntries; tests lower it (export_test.go)
	seen    observer
	writeMu sync.Mutex // serialises write and edit: check, change, record
}

// New returns a Workspace rooted at root, which must exist and be a
// directory. The root is resolved to an absolute path free of symbolic
// links. Close the Workspace to release its directory handle.
func New(root string, opts Options) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace root %q is not a directory", root)
	}
	fsys, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %q: %w", root, err)
	}
	var dev *uint64
	if d, _, ok := linkInfo(fi); ok {
		dev = &d
	}
	return &Workspace{
		root:  real,
		alias: filepath.Clean(abs),
		fsys:  fsys,
		opts:  opts.withDefaults(),
		shell: findShell(),
		dev:   dev,
		scan:  maxScanEntries,
		seen:  observer{files: map[string]stamp{}},
	}, nil
}

// Root returns the workspace root: an absolute path free of symbolic links.
func (w *Workspace) Root() string { return w.root }

// Close releases the root directory handle. Tools fail after Close.
func (w *Workspace) Close() error { return w.fsys.Close() }

// Tools returns the workspace tools: read, write, edit, list, glob, grep,
// and bash when Options.AllowBash is set. Their descriptions state the
// configured limits.
func (w *Workspace) Tools() []registry.Tool {
	tools := []registry.Tool{
		w.readTool(), w.writeTool(), w.editTool(),
		w.listTool(), w.globTool(), w.grepTool(),
	}
	if w.opts.AllowBash {
		tools = append(tools, w.bashTool())
	}
	return tools
}

// decode unmarshals a tool's arguments into v, refusing unknown fields. The
// executor validates arguments against the schema first; this also guards
// a Body called directly.
func decode(in api.Input, v any) error {
	args := bytes.TrimSpace(in.Args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &api.Error{Code: api.CodeInvalidArgs, Message: "invalid arguments: " + err.Error(), Cause: err}
	}
	return nil
}

// output returns v as the value and text as what the model is shown.
func output(v any, text string) (api.Output, error) {
	out, err := api.ValueOutput(v)
	out.Text = text
	return out, err
}
