package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/ptcx/ptcx/internal/proc"
)

// version is the build's version, given to Run by package main (set at
// build time with -ldflags "-X main.version=..."); empty, the module's.
var version = ""

var versionCommand = command{
	name:    "version",
	brief:   "print the version and how tool processes are contained",
	summary: "Print ptcx's version, and how tool processes are contained on this machine.",
	usage:   "version",
	run:     runVersion,
}

func runVersion(_ context.Context, c command, s *stdio, args []string) int {
	fs := newFlags(c, s)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, s, "unexpected argument %q", pos[0])
	}
	fmt.Fprintf(s.out, "ptcx %s (%s %s/%s)\n", currentVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	m := proc.Active()
	fmt.Fprintf(s.out, "tool processes: %s: %s\n", m, m.Describe())
	return exitOK
}

func currentVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
