package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// helperEnv names the variant a re-executed test binary starts a tree
// with, as a helper for TestTree_ptcxKilled; helperPids is where the tree
// records its pids.
const (
	helperEnv  = "PTCX_PROC_HELPER"
	helperPids = "PTCX_PROC_HELPER_PIDS"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		helper(name)
		return
	}
	os.Exit(m.Run())
}

// helper starts a tree whose shell starts a child, then waits to be
// killed.
func helper(name string) {
	hs := map[string]how{
		"cgroup":             {m: MechanismCgroup},
		"pid-namespace":      {m: MechanismPIDNamespace},
		"pid-namespace+user": {m: MechanismPIDNamespace, user: true},
		"process-group":      {m: MechanismProcessGroup},
	}
	Active() // finds the cgroup parent
	cmd := exec.Command("/bin/sh", "-c", `sh -c '`+record+`; exec sleep 300' &
until [ -s "$PIDS" ]; do sleep 0.01; done
`+record+`; exec sleep 300`)
	cmd.Env = append(os.Environ(), "PIDS="+os.Getenv(helperPids))
	if _, err := startWith(hs[name], cmd); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for { // a sleep, not select{}: without cgo the runtime would call a blocked program deadlocked and end it
		time.Sleep(time.Hour)
	}
}

// TestTree_ptcxKilled: when the process that started a tree is SIGKILLed,
// the tree's own process dies with it (PR_SET_PDEATHSIG); in a PID
// namespace everything does; in a cgroup, what is left is killed by the next
// process's sweep, which also removes the cgroup.
func TestTree_ptcxKilled(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for name, h := range mechanisms(t) {
		t.Run(name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), helperEnv+"="+name, helperPids+"="+pidFile)
			require.NoError(t, cmd.Start())
			require.Eventually(t, func() bool { return len(readPids(t, pidFile)) == 2 }, within, 5*time.Millisecond)
			pids := readPids(t, pidFile)
			t.Cleanup(func() { // what a mechanism does not promise to kill
				for _, pid := range pids {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			require.Error(t, cmd.Wait())

			child, shell := pids[0], pids[1] // the shell records once the child has
			switch h.m {
			case MechanismPIDNamespace:
				requireGone(t, shell)
				requireGone(t, child)
			case MechanismCgroup:
				requireGone(t, shell)
				leaves, err := filepath.Glob(filepath.Join(cgroupParent, fmt.Sprintf("%s%d-*", leafPrefix, cmd.Process.Pid)))
				require.NoError(t, err)
				require.Len(t, leaves, 1, "the dead helper's cgroup")
				sweepStale(cgroupParent)
				requireGone(t, child)
				require.NoDirExists(t, leaves[0])
			default:
				requireGone(t, shell)
			}
		})
	}
}
