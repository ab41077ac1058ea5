package toolsfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/proc"
	"github.com/ptcx/ptcx/internal/text"
)

// Caps on what a command may print.
const (
	// MaxStdout is the most a command may print on stdout; more is an error
	// and the command is killed.
	MaxStdout = 1 << 20
	// maxStderr is how much of stderr is kept; maxMessage how much of it a
	// failure shows.
	maxStderr  = 64 << 10
	maxMessage = 2 << 10
	// waitDelay is how long output pipes held by a command's leftover
	// children may stay open after it exits or is killed: only a child that
	// escaped its tree can hold them (see internal/proc).
	waitDelay = 500 * time.Millisecond
)

// command runs an argv with the call's arguments as a JSON object on stdin
// and reads its JSON result from stdout. The command runs as a process tree
// (internal/proc), which is killed when it ends, times out or is cancelled,
// so nothing it started is left behind. Its environment is the tools'
// allowlist plus what the tool's "env" names.
type command struct {
	argv     []string
	dir      string
	env      EnvSpec
	envelope bool // "reply": "envelope": stdout is {"value": …, "labels": …}
}

func (c command) run(ctx context.Context, in api.Input) (api.Output, error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir = c.dir
	cmd.Env = c.env.environ()
	cmd.Stdin = bytes.NewReader(in.Args)
	stdout := &capped{max: MaxStdout, overflow: make(chan struct{})}
	stderr := &capped{max: maxStderr, truncate: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay

	tree, err := proc.Start(cmd)
	if err != nil {
		return api.Output{}, fmt.Errorf("cannot start %s: %w", c.argv[0], unwrapExec(err))
	}
	done := make(chan error, 1)
	go func() { done <- tree.Wait() }() // kills what the command left running
	select {
	case err = <-done:
	case <-ctx.Done():
		tree.Kill()
		<-done
	case <-stdout.overflow:
		tree.Kill()
		<-done
		return api.Output{}, fmt.Errorf("%s printed more than %d bytes on stdout; it was stopped", c.argv[0], MaxStdout)
	}

	if ctx.Err() != nil {
		return api.Output{}, ctx.Err()
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return api.Output{}, errors.New(failureMessage(c.argv[0], exit, stderr.String()))
		}
		if !errors.Is(err, exec.ErrWaitDelay) {
			return api.Output{}, fmt.Errorf("%s: %w", c.argv[0], err)
		}
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if len(out) == 0 {
		return api.Output{Value: json.RawMessage("null")}, nil
	}
	if !json.Valid(out) {
		return api.Output{}, api.Errorf(api.CodeInvalidToolOutput,
			"%s printed output that is not JSON (a command tool must print one JSON value on stdout): %s", c.argv[0], excerpt(string(out)))
	}
	if c.envelope {
		return c.unwrap(out)
	}
	return api.Output{Value: append(json.RawMessage(nil), out...)}, nil
}

// unwrap reads a command's envelope: {"value": …, "labels": …}, where
// labels (optional) raise the label of this result above the tool's
// declared ones (docs/security.md, "Data flow"); they cannot lower it.
func (c command) unwrap(out []byte) (api.Output, error) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(out, &env); err != nil || env == nil {
		return api.Output{}, api.Errorf(api.CodeInvalidToolOutput,
			"%s replies in an envelope, but printed something that is not a JSON object {\"value\": …, \"labels\": …}: %s", c.argv[0], excerpt(string(out)))
	}
	var o api.Output
	for k, v := range env {
		switch k {
		case "value":
			o.Value = append(json.RawMessage(nil), v...)
		case "labels":
			l, err := api.ParseLabel(v)
			if err != nil {
				return api.Output{}, api.Errorf(api.CodeInvalidToolOutput, "%s printed an envelope whose labels are not a label: %v", c.argv[0], err)
			}
			o.Labels = l
		default:
			return api.Output{}, api.Errorf(api.CodeInvalidToolOutput, "%s printed an envelope with a member %q: it has only value and labels", c.argv[0], k)
		}
	}
	if o.Value == nil {
		o.Value = json.RawMessage("null")
	}
	return o, nil
}

// environ is the command's whole environment: the allowlist, then what
// Pass names, then what Set gives.
func (e EnvSpec) environ() []string {
	env := proc.BaseEnv()
	env.Pass(e.Pass...)
	for _, name := range slices.Sorted(maps.Keys(e.Set)) {
		env.Set(name, e.Set[name])
	}
	return env.Environ()
}

func failureMessage(name string, exit *exec.ExitError, stderr string) string {
	msg := strings.TrimSpace(stderr)
	status := fmt.Sprintf("exited with status %d", exit.ExitCode())
	if sig, ok := proc.KilledBy(exit.ProcessState); ok {
		status = "was killed by signal " + sig.String()
	}
	if msg == "" {
		return fmt.Sprintf("%s %s", name, status)
	}
	return excerpt(msg)
}

// excerpt caps a message shown to the model.
func excerpt(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	kept := text.Truncate(s, maxMessage)
	return kept + fmt.Sprintf("… (%d more bytes)", len(s)-len(kept))
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// capped is a writer that keeps at most max bytes. Past it, it either
// truncates silently (stderr) or signals overflow once (stdout).
type capped struct {
	buf      bytes.Buffer
	max      int
	truncate bool
	overflow chan struct{}
	over     bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if len(p) <= room {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	if c.truncate {
		return len(p), nil
	}
	if !c.over {
		c.over = true
		close(c.overflow)
	}
	return 0, io.ErrShortWrite
}

func (c *capped) Bytes() []byte  { return c.buf.Bytes() }
func (c *capped) String() string { return c.buf.String() }
