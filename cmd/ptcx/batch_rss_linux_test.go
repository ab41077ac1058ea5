package main

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A batch ten times longer peaks at about the same memory: input and
// output are streamed, and what grows with the batch (the set of ids, for
// duplicates and --resume) is a few dozen bytes per item.
func TestBatch_flatMemory(t *testing.T) {
	peak := func(n int) int64 {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = item(fmt.Sprintf("item-%06d", i), fmt.Sprintf(`console.log("item %d"); return {i: %d, r: Math.random()}`, i, i), `"seed":1`)
		}
		items := writeItems(t, lines)
		cmd := child(t, "batch", "--no-builtin", "--parallel", "2", "--out", filepath.Join(t.TempDir(), "out.jsonl"), items)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), fmt.Sprintf("%d runs", n))
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	}
	small, large := peak(300), peak(3000)
	t.Logf("peak RSS: %d MiB for 300 items, %d MiB for 3,000", small>>20, large>>20)
	require.Less(t, large, small+32<<20, "memory grows with the batch's length")
}
