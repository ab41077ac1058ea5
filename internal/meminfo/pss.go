// Package meminfo reads this process's proportional resident memory, the
// figure the benchmarks' memory workloads compare (bench) and the
// sandbox's memory benchmarks report (wasmhost).
package meminfo

import (
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
)

// Rollup is where Pss reads: Linux 4.14 on.
const Rollup = "/proc/self/smaps_rollup"

// ErrNoPss is ParsePss's error for text without a line "Pss: N kB" it can
// read.
var ErrNoPss = errors.New("meminfo: " + Rollup + " has no line \"Pss: N kB\"")

// Pss returns this process's proportional resident memory in bytes: the
// pages it has in memory, each shared page divided among the mappings
// that share it (statm's resident memory counts a page once per mapping
// that maps it). Where Rollup cannot be read its error says so (an
// fs.ErrNotExist where the kernel has none).
func Pss() (int64, error) {
	b, err := os.ReadFile(Rollup)
	if err != nil {
		return 0, err
	}
	return ParsePss(b)
}

// ParsePss returns the Pss line of smaps_rollup's text b, in bytes, or
// ErrNoPss.
func ParsePss(b []byte) (int64, error) {
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "Pss:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > math.MaxInt64>>10 {
			break
		}
		return kb << 10, nil
	}
	return 0, ErrNoPss
}
