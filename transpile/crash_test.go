//go:build linux

package transpile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptcx/ptcx/internal/text"
	"github.com/stretchr/testify/require"
)

// crashEnv selects, in a re-executed test binary, the input of
// TestStrip_crashInputsInAChild to strip.
const crashEnv = "PTCX_TRANSPILE_CRASH_CASE"

// crashCases are inputs that overflowed esbuild's goroutine stack (a fatal
// error that kills the process) or cost hundreds of MB or many seconds
// before the pre-check, and the worst inputs it accepts.
var crashCases = map[string]struct {
	code func() string
	want string // "nesting", "limit" or "ok": how Strip must end
}{
	"200000 prefix operators": {func() string { return "x=" + rep("!", 200000) + "1" }, "nesting"},
	"200000 brackets":         {func() string { return "x=" + rep("(", 200000) + "1" + rep(")", 200000) }, "nesting"},
	"100000 brackets":         {func() string { return "x=" + rep("[", 100000) + rep("]", 100000) }, "nesting"},
	"100000 comma operators":  {func() string { return "x=(" + rep("a,", 100000) + "a)" }, "nesting"},
	"100000 member calls":     {func() string { return "x=a" + rep("()", 100000) }, "nesting"},
	"string folding bomb":     {func() string { return "x=" + rep("'a'+", 120000) + "'a'" }, "limit"},
	"deepest accepted brackets": {
		func() string { return "x=" + rep("(", MaxNesting-2) + "1" + rep(")", MaxNesting-2) }, "ok"},
	"deepest accepted statements": {func() string { return rep("if(a)", MaxNesting-2) + ";" }, "ok"},
	"most indented lines accepted": {func() string {
		gen := func(d int) string { return rep("{\n", MaxNesting-1) + rep("0\n", d) + rep("}", MaxNesting-1) }
		return gen(maxAccepted(gen, 1<<17))
	}, "ok"},
	"max-size real program": {func() string {
		b, err := os.ReadFile("testdata/realistic.ts")
		if err != nil {
			panic(err)
		}
		block := "{\n" + string(b) + "}\n"
		return rep(block, MaxSourceBytes/len(block))
	}, "ok"},
}

// TestStrip_crashInputsInAChild strips each crash input in a child process
// (this test binary, re-executed), so that a regression fails the test
// instead of killing it, and reports the child's peak RSS.
func TestStrip_crashInputsInAChild(t *testing.T) {
	if name := os.Getenv(crashEnv); name != "" {
		crashChild(name)
		return
	}
	for name, cc := range crashCases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStrip_crashInputsInAChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashEnv+"="+name)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			elapsed := time.Since(start)
			require.NoError(t, err, "the child died:\n%s", text.Shorten(string(out), 2000))
			require.Contains(t, string(out), "outcome: "+cc.want+"\n", text.Shorten(string(out), 2000))
			// The rusage high-water mark includes this process's memory
			// shared with the child until its exec, so the child also
			// reports its own (VmHWM, where the platform has it).
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
			own := childPeak(string(out))
			t.Logf("%s: %s in %v; child peak RSS %d MiB (rusage, with the parent's share: %d MiB)",
				name, cc.want, elapsed.Round(time.Millisecond), own>>10, rss>>10)
			if own > 0 {
				require.Less(t, own, int64(256<<10), "host memory stays bounded (with room for the race detector)")
			}
		})
	}
}

// childPeak reads the "peak: N kB" line a child prints; 0 if none.
func childPeak(out string) int64 {
	var kb int64
	if i := strings.Index(out, "peak: "); i >= 0 {
		_, _ = fmt.Sscanf(out[i:], "peak: %d kB", &kb)
	}
	return kb
}

func crashChild(name string) {
	defer func() {
		if b, err := os.ReadFile("/proc/self/status"); err == nil {
			if i := strings.Index(string(b), "VmHWM:"); i >= 0 {
				var kb int64
				_, _ = fmt.Sscanf(strings.TrimSpace(string(b[i+len("VmHWM:"):])), "%d", &kb)
				fmt.Printf("peak: %d kB\n", kb)
			}
		}
	}()
	cc, ok := crashCases[name]
	if !ok {
		fmt.Println("outcome: unknown case")
		return
	}
	_, err := Strip(cc.code())
	var se *SyntaxError
	var le *LimitError
	switch {
	case err == nil:
		fmt.Print("outcome: ok\n")
	case errors.As(err, &se) && strings.Contains(se.Message, "nests deeper"):
		fmt.Print("outcome: nesting\n")
	case errors.As(err, &le):
		fmt.Print("outcome: limit\n")
	default:
		fmt.Printf("outcome: other %v\n", err)
	}
}
