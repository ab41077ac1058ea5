package toolsfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/ptcx/ptcx/registry"
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
	// children may stay open after it exits or is killed.
	waitDelay = 500 * time.Millisecond
)

// command runs an argv with the call's arguments as a JSON object on stdin
// and reads its JSON result from stdout. The command runs in its own process
// group, which is killed when it ends, times out or is cancelled, so nothing
// it started is left behind.
type command struct {
	argv []string
	dir  string
}

func (c command) run(ctx context.Context, in registry.Input) (registry.Output, error) {
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Dir = c.dir
	cmd.Stdin = bytes.NewReader(in.Args)
	stdout := &capped{max: MaxStdout, overflow: make(chan struct{})}
	stderr := &capped{max: maxStderr, truncate: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay

	if err := cmd.Start(); err != nil {
		return registry.Output{}, fmt.Errorf("cannot start %s: %w", c.argv[0], unwrapExec(err))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-stdout.overflow:
		_ = killGroup(cmd)
		<-done
		return registry.Output{}, fmt.Errorf("%s printed more than %d bytes on stdout; it was stopped", c.argv[0], MaxStdout)
	}
	_ = killGroup(cmd) // background children of a command that exited

	if ctx.Err() != nil {
		return registry.Output{}, ctx.Err()
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return registry.Output{}, errors.New(failureMessage(c.argv[0], exit, stderr.String()))
		}
		if !errors.Is(err, exec.ErrWaitDelay) {
			return registry.Output{}, fmt.Errorf("%s: %w", c.argv[0], err)
		}
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if len(out) == 0 {
		return registry.Output{Value: json.RawMessage("null")}, nil
	}
	if !json.Valid(out) {
		return registry.Output{}, registry.Errorf(registry.CodeInvalidToolOutput,
			"%s printed output that is not JSON (a command tool must print one JSON value on stdout): %s", c.argv[0], excerpt(string(out)))
	}
	return registry.Output{Value: append(json.RawMessage(nil), out...)}, nil
}

func failureMessage(name string, exit *exec.ExitError, stderr string) string {
	msg := strings.TrimSpace(stderr)
	status := fmt.Sprintf("exited with status %d", exit.ExitCode())
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		status = "was killed by signal " + ws.Signal().String()
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
	cut := maxMessage
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
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
