package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/proc"
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/registry"
)

// drainGrace is how long bash waits, once the command's process tree is
// dead, for its output pipes to close. Only a process that escaped the tree
// (setsid, where the tree is a process group: see internal/proc) can keep
// them open; after the grace bash stops reading.
const drainGrace = time.Second

const bashInput = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "Shell command, run with -c in the workspace root."},
    "timeout_ms": {"type": "integer", "minimum": 1, "description": "Timeout in milliseconds; it can only lower the configured timeout."}
  },
  "required": ["command"],
  "additionalProperties": false
}`

const bashOutput = `{
  "type": "object",
  "properties": {
    "exit_code": {"type": "integer", "description": "The shell's exit status; 128+N when it was killed by signal N (137 after a timeout)."},
    "stdout": {"type": "string"},
    "stderr": {"type": "string"},
    "truncated": {"type": "boolean", "description": "True when output beyond the cap was dropped."},
    "timed_out": {"type": "boolean", "description": "True when the command was killed at its timeout."}
  },
  "required": ["exit_code", "stdout", "stderr", "truncated", "timed_out"],
  "additionalProperties": false
}`

type bashArgs struct {
	Command   string `json:"command"`
	TimeoutMS *int64 `json:"timeout_ms"`
}

type bashResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
	TimedOut  bool   `json:"timed_out"`
}

func (w *Workspace) bashTool() registry.Tool {
	return registry.Tool{
		Name: "bash",
		Description: fmt.Sprintf("Run a shell command (%s -c) in the workspace root and return its exit code, stdout and stderr. "+
			"It times out after %s (timeout_ms may lower that); processes it leaves in the background are killed when it ends. "+
			"Output is capped at %s in total. stdin is empty; the environment holds only PATH, HOME and PWD (the workspace root), SHELL, LANG, "+
			"TERM=dumb, and LC_ALL and TZ when ptcx has them. A non-zero exit code or a timeout is a normal result: check exit_code and timed_out.",
			w.shell, w.opts.BashTimeout, size(int64(w.opts.MaxOutputBytes))),
		InputSchema:  json.RawMessage(bashInput),
		OutputSchema: json.RawMessage(bashOutput),
		Body:         w.bash,
		Policy:       bashPolicy(),
	}
}

// bash runs a command. Exit codes and timeouts are results; a cancelled ctx
// (the caller gave up, or the tool's own deadline passed) is an error.
func (w *Workspace) bash(ctx context.Context, in api.Input) (api.Output, error) {
	var a bashArgs
	if err := decode(in, &a); err != nil {
		return api.Output{}, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return api.Output{}, failf(nil, "command is empty: give a shell command to run")
	}
	timeout := w.opts.BashTimeout
	if a.TimeoutMS != nil {
		if *a.TimeoutMS < 1 {
			return api.Output{}, failf(nil, "timeout_ms must be 1 or more")
		}
		if *a.TimeoutMS < timeout.Milliseconds() {
			timeout = time.Duration(*a.TimeoutMS) * time.Millisecond
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := w.run(runCtx, a.Command)
	if err != nil {
		return api.Output{}, err
	}
	if res.TimedOut && ctx.Err() != nil {
		return api.Output{}, fmt.Errorf("command stopped before it finished: %w", ctx.Err())
	}
	return output(res, bashText(res, timeout))
}

// run starts command as a process tree (internal/proc) and waits for it.
// When the shell exits, or ctx is done (TimedOut), the whole tree is killed,
// so nothing it started outlives the call.
func (w *Workspace) run(ctx context.Context, command string) (bashResult, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return bashResult{}, fmt.Errorf("cannot create a pipe for the command's output: %w", err)
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return bashResult{}, fmt.Errorf("cannot create a pipe for the command's output: %w", err)
	}
	defer errR.Close()

	cmd := exec.Command(w.shell, "-c", command)
	cmd.Dir = w.root
	cmd.Env = w.shellEnv()
	cmd.Stdout, cmd.Stderr = outW, errW // *os.File: the child writes to the pipes directly
	tree, err := proc.Start(cmd)
	outW.Close()
	errW.Close()
	if err != nil {
		return bashResult{}, fmt.Errorf("cannot start the shell %s: %w", w.shell, err)
	}

	capped := &capture{left: w.opts.MaxOutputBytes}
	stdout, stderr := &stream{c: capped}, &stream{c: capped}
	var readers sync.WaitGroup
	readers.Go(func() { stdout.drain(outR) })
	readers.Go(func() { stderr.drain(errR) })

	exited := make(chan struct{})
	go func() {
		_ = tree.Wait() // kills what the shell left in the background
		close(exited)
	}()
	timedOut := false
	select {
	case <-exited:
	case <-ctx.Done():
		timedOut = true
		tree.Kill()
		<-exited
	}

	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		outR.Close() // unblocks the readers
		errR.Close()
		<-drained
	}
	return bashResult{
		ExitCode:  proc.ExitCode(cmd.ProcessState),
		Stdout:    stdout.text(),
		Stderr:    stderr.text(),
		Truncated: capped.dropped > 0,
		TimedOut:  timedOut,
	}, nil
}

// shellEnv is the command's whole environment: the tools' allowlist
// (proc.BaseEnv), so no host token, key or credential reaches the command,
// with HOME and PWD at the workspace root.
func (w *Workspace) shellEnv() []string {
	env := proc.BaseEnv()
	env.Set("HOME", w.root)
	env.Set("PWD", w.root)
	env.Set("SHELL", w.shell)
	return env.Environ()
}

// findShell prefers bash and falls back to the POSIX shell.
func findShell() string {
	for _, sh := range []string{"/bin/bash", "/usr/bin/bash"} {
		if fi, err := os.Stat(sh); err == nil && !fi.IsDir() {
			return sh
		}
	}
	return "/bin/sh"
}

// capture is the output budget stdout and stderr share.
type capture struct {
	mu      sync.Mutex
	left    int
	dropped int64
}

// stream keeps the prefix of one output stream that fits the budget and
// drops the rest, while still draining it so the command never blocks.
type stream struct {
	c   *capture
	buf []byte
}

func (s *stream) write(p []byte) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	n := min(len(p), s.c.left)
	s.buf = append(s.buf, p[:n]...)
	s.c.left -= n
	s.c.dropped += int64(len(p) - n)
}

// drain copies r into s until EOF or a read error (a closed pipe).
func (s *stream) drain(r *os.File) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		s.write(chunk[:n])
		if err != nil {
			return
		}
	}
}

func (s *stream) text() string {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.c.dropped > 0 {
		return string(text.TrimIncomplete(s.buf))
	}
	return string(s.buf)
}

// bashText is what the model is shown: stdout, stderr, and a status line.
func bashText(r bashResult, timeout time.Duration) string {
	var b strings.Builder
	b.WriteString(r.Stdout)
	if r.Stderr != "" {
		if b.Len() > 0 && !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.WriteString(r.Stderr)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	if r.Truncated {
		b.WriteString("[output truncated: only the beginning is shown]\n")
	}
	if r.TimedOut {
		fmt.Fprintf(&b, "[timed out after %s: the command and every process it started were killed]", timeout)
	} else {
		fmt.Fprintf(&b, "[exit code %d]", r.ExitCode)
	}
	return b.String()
}
