//go:build linux

package vmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// PhysicalMemory returns the memory this process may use: MemTotal of
// /proc/meminfo, lowered to the cgroup v2 limit (memory.max) when the
// process runs in a container that sets one; false when neither can be read.
func PhysicalMemory() (int64, bool) {
	total, ok := memTotal()
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil && limit > 0 && (!ok || limit < total) {
			return limit, true
		}
	}
	return total, ok
}

func memTotal() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !found {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil || kb <= 0 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
