package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
)

var mcpCommand = command{
	name: "mcp",
	summary: "Serve the Model Context Protocol over stdio. A client sees exactly the tools the mode advertises\n" +
		"(in ptc mode only run_code, whose description carries the typed SDK), and every tools/call goes\n" +
		"through the executor, so the collapse holds. --upstream bridges another MCP server's tools into\n" +
		"programs (repeatable). The mode defaults to ptc.",
	usage: "mcp [--tools FILE] [--mode ptc|both|native] [--scope NAME] [--workspace DIR] [--allow-bash] [--seed N] [--trace FILE] [--upstream 'CMD ARGS...']...",
	run:   runMCP,
}

// repeated collects a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func runMCP(ctx context.Context, c command, s *stdio, args []string) int {
	st := setup{defaultMode: api.ModePTC}
	fs := newFlags(c, s)
	st.flags(fs, true)
	var upstreams repeated
	fs.Var(&upstreams, "upstream", "an MCP server `COMMAND` (with its arguments, shell-quoted) whose tools programs may call as <prefix>.<tool>")
	var ef evalFlags
	ef.register(fs)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, s, "unexpected argument %q", pos[0])
	}
	var commands [][]string
	for _, u := range upstreams {
		argv, err := splitCommand(u)
		if err != nil {
			return usageError(fs, s, "--upstream %q: %v", u, err)
		}
		commands = append(commands, argv)
	}
	closeTrace, err := ef.open(&st, false)
	if err != nil {
		return fail(s, err)
	}
	defer func() {
		if err := closeTrace(); err != nil {
			fmt.Fprintf(s.err, "ptcx mcp: %s\n", err)
		}
	}()
	e, err := st.build(ctx, executor.NewConfig())
	if err != nil {
		return setupFailed(fs, s, err)
	}
	defer e.close()

	for _, argv := range commands {
		b, err := mcpbridge.Connect(ctx, e.reg, registry.Deployment, mcpbridge.Upstream{Command: argv})
		if err != nil {
			return fail(s, fmt.Errorf("--upstream %s: %w", strings.Join(argv, " "), err))
		}
		defer b.Close()
		for _, w := range b.Warnings() {
			fmt.Fprintf(s.err, "ptcx mcp: --upstream %s: %s\n", argv[0], w)
		}
		fmt.Fprintf(s.err, "ptcx mcp: bridged %d tools from %s\n", len(b.Tools()), argv[0])
	}

	instructions, err := promptText(e)
	if err != nil {
		return fail(s, err)
	}
	srv, err := mcpserver.New(e.exec, e.scope, mcpserver.Options{Name: "ptcx", Version: currentVersion(), Instructions: instructions})
	if err != nil {
		return fail(s, err)
	}
	err = srv.Run(ctx, mcpserver.StdioTransport(io.NopCloser(s.in), nopWriteCloser{s.out}))
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return fail(s, err)
	}
	return exitOK
}

// promptText is the scope's tool sections, sent to MCP clients as the
// server's instructions.
func promptText(e *env) (string, error) {
	sections, err := e.promptSections()
	if err != nil {
		return "", err
	}
	parts := make([]string, len(sections))
	for i, sec := range sections {
		parts[i] = sec.Text
	}
	return strings.Join(parts, "\n"), nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// splitCommand splits a command line into words the way a POSIX shell would
// for plain words, 'single' and "double" quotes and backslash escapes; it
// expands nothing.
func splitCommand(line string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote rune
	)
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(runes) && strings.ContainsRune(`"\$`+"`", runes[i+1]):
				i++
				cur.WriteRune(runes[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			if i+1 == len(runes) {
				return nil, errors.New("ends with a backslash")
			}
			i++
			cur.WriteRune(runes[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
