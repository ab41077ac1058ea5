package cli

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the master end the test types into
// and the terminal a child ptcx gets as its stdin and stderr.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	raw, err := m.SyscallConn()
	require.NoError(t, err)
	var n int
	var ioctlErr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		if ioctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioctlErr == nil { // unlockpt
			n, ioctlErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN) // ptsname
		}
	}))
	require.NoError(t, ioctlErr)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	return m, s
}

// ptcx run on a terminal asks there: the prompt shows the call, and the
// person's answer decides it.
func TestRun_approval_onATerminal(t *testing.T) {
	prog := writeProgram(t, deployProgram)
	for _, tt := range []struct {
		name, typed, want string
	}{
		{"approved", "y\n", `"deployed": true`},
		{"declined", "n\n", "DENIED: rejected by the approver: declined at the terminal"},
		{"the terminal's input ends", "\x04", "DENIED: rejected by the approver: no answer: the terminal's input ended"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			master, tty := openPTY(t)
			cmd := child(t, "run", "--no-builtin", "--tools", approvalFile, prog)
			var stdout bytes.Buffer
			cmd.Stdin, cmd.Stderr, cmd.Stdout = tty, tty, &stdout
			require.NoError(t, cmd.Start())
			require.NoError(t, tty.Close()) // the child holds it now
			screen := newPromptBuffer()
			go func() {
				defer screen.end()
				buf := make([]byte, 4096)
				for {
					n, err := master.Read(buf)
					_, _ = screen.Write(buf[:n])
					if err != nil {
						return
					}
				}
			}()
			if !screen.waitFor("approve this call? [y/N] ", 1) {
				_ = cmd.Wait()
				t.Fatalf("no prompt on the terminal; it shows %q, stdout %q", screen.String(), stdout.String())
			}
			_, err := master.Write([]byte(tt.typed))
			require.NoError(t, err)
			_ = cmd.Wait()
			require.Contains(t, stdout.String(), tt.want)
			shown := screen.String()
			require.Contains(t, shown, "ptcx: a call needs your approval")
			require.Contains(t, shown, "tool:      deploy (from the run_code program)")
			require.Contains(t, shown, `arguments: {"env":"staging"}`)
			require.Contains(t, shown, "reason:    deploy needs approval: its declaration says needs_approval")
			require.Contains(t, shown, "labels:    untrusted, private (what the program had read when it made the call)")
		})
	}
}
