//go:build !linux

package proc

// waitExit cannot wait without reaping here: it reports false, and Wait
// kills the rest of the tree after cmd.Wait.
func waitExit(int) bool { return false }
