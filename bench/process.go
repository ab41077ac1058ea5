package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// processTimeout bounds one process of cpython-native (a run, its version
// probe): a native run of a bench program takes milliseconds. A
// qjs-native job, all its samples in one process, has a Node job's bound
// (DefaultNodeTimeout).
const processTimeout = 2 * time.Minute

// output runs name with args as exec.Cmd.Output does, bounded: killed at
// timeout (or ctx's end), its pipes let go stopGrace after that, and of
// its standard output and error the first maxDriverOutput bytes kept
// each. The error says what it printed on standard error.
func output(ctx context.Context, timeout time.Duration, who, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout, stderr limitedBuffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = &stdout, &stderr, stopGrace
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", err, context.Cause(ctx))
		}
		return stdout.Bytes(), fmt.Errorf("%s: %w: %s", who, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}
