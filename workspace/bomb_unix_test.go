//go:build unix

package workspace_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

// bombChild names the environment variable that makes a test the child
// half of TestEdit_replaceAllBomb.
const bombChild = "PTCX_WORKSPACE_EDIT_BOMB"

// TestEdit_replaceAllBomb replays the input that killed the host: a 1 MB
// file of one letter, every letter replaced by a 100 KB string, which
// strings.ReplaceAll would size at about 99 GB ("fatal error: runtime: out
// of memory", which no recover catches). It runs in a child process (this
// test binary again), so a regression fails the test instead of killing
// the test binary; the child must exit cleanly with the size error.
func TestEdit_replaceAllBomb(t *testing.T) {
	if os.Getenv(bombChild) == "1" {
		e := newEnv(t, workspace.Options{MaxReadBytes: 2 << 20})
		e.file("a.txt", strings.Repeat("a", 1<<20))
		ok[readOut](t, e, "read", m{"path": "a.txt"})
		_, err := e.body(t, "edit")(context.Background(), inputOf(t, m{
			"path": "a.txt", "old_string": "a", "new_string": strings.Repeat("b", 100<<10), "replace_all": true,
		}))
		require.ErrorIs(t, err, workspace.ErrTooLarge)
		fmt.Println("child error:", err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEdit_replaceAllBomb$", "-test.count=1")
	cmd.Env = append(os.Environ(), bombChild+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child died:\n%s", out)
	require.Contains(t, string(out), `child error: replacing 1048576 occurrences of old_string in "a.txt" would make it 100 GiB, more than the 32 MiB file size limit`)
	ru, found := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, found)
	rss := maxRSSBytes(ru)
	t.Logf("child peak RSS: %d MiB", rss>>20)
	require.Less(t, rss, int64(512<<20), "the child's peak RSS")
}
