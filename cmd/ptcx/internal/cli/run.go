package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// Exit statuses.
const (
	exitOK    = 0 // the call succeeded
	exitTool  = 1 // the call failed (the JSON says why), or setup failed
	exitUsage = 2 // the command line is wrong
)

// command is one subcommand.
type command struct {
	name string
	// brief is the command's line in `ptcx help`: lower case, no full
	// stop, at most 72 bytes (TestHelp_oneLinePerCommand).
	brief   string
	summary string // `ptcx help CMD` and --help
	usage   string // the synopsis after "ptcx "
	run     func(ctx context.Context, c command, s *stdio, args []string) int
}

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func commands() []command {
	return []command{
		callCommand,
		runCommand,
		planCommand,
		toolsCommand,
		wireCommand,
		sdkCommand,
		promptCommand,
		mcpCommand,
		serveCommand,
		batchCommand,
		replayCommand,
		benchCommand,
		versionCommand,
	}
}

// run is the whole CLI; main only calls it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &stdio{in: stdin, out: stdout, err: stderr}
	if len(args) == 0 {
		topUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := lookup(args[1]); ok {
				fmt.Fprintf(stdout, "usage: ptcx %s\n\n%s\n", c.usage, c.summary)
				return exitOK
			}
			fmt.Fprintf(stderr, "ptcx: unknown command %q\n\n", args[1])
			topUsage(stderr)
			return exitUsage
		}
		topUsage(stdout)
		return exitOK
	case "-version", "--version":
		args = []string{"version"}
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "ptcx: unknown command %q\n\n", args[0])
		topUsage(stderr)
		return exitUsage
	}
	return c.run(ctx, c, s, args[1:])
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func topUsage(w io.Writer) {
	fmt.Fprintln(w, "ptcx runs programmatic tool calls: tools called directly or from TypeScript programs in a WebAssembly sandbox.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: ptcx <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.brief)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'ptcx help <command>' for what a command does, 'ptcx <command> --help' for its flags too.")
}

// newFlags returns a flag set whose errors and help go to stderr with the
// command's usage.
func newFlags(c command, s *stdio) *flag.FlagSet {
	fs := flag.NewFlagSet("ptcx "+c.name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: ptcx %s\n\n%s\n", c.usage, c.summary)
		if hasFlags(fs) {
			fmt.Fprintln(s.err, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parse parses flags anywhere among the positional arguments ("--" ends
// flags). It returns the positional arguments, or an exit status when the
// caller should stop (help asked for, or a usage error already reported).
//
// A wrong flag is reported in two lines, the flag package's message and
// where to read more, not with the whole flag list, which only --help
// prints.
func parse(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var pos []string
	help := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = help }()
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help()
				return nil, exitOK, false
			}
			seeHelp(fs)
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError reports a wrong command line: one line saying what is wrong,
// one saying where to read more.
func usageError(fs *flag.FlagSet, s *stdio, format string, args ...any) int {
	fmt.Fprintf(s.err, "%s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	seeHelp(fs)
	return exitUsage
}

// seeHelp is the line after a usage error.
func seeHelp(fs *flag.FlagSet) {
	fmt.Fprintf(fs.Output(), "see '%s --help'\n", fs.Name())
}

// fail reports a setup failure (a bad tools file, a guest that cannot load).
func fail(s *stdio, err error) int {
	fmt.Fprintf(s.err, "ptcx: %s\n", strings.TrimSpace(err.Error()))
	return exitTool
}
