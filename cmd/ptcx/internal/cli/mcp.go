package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
)

var mcpCommand = command{
	name:  "mcp",
	brief: "serve MCP over stdio (ptc: run_code alone, the SDK in its description)",
	summary: "Serve the Model Context Protocol over stdio. A client sees exactly the tools the mode advertises\n" +
		"(in ptc mode only run_code, whose description carries the typed SDK), and every tools/call goes\n" +
		"through the executor, so the collapse holds. --upstream bridges another MCP server's tools into\n" +
		"programs (repeatable; NAME= names its prefix, so two instances of one server can coexist).\n" +
		"The SDK is sent once, in run_code's description unless --sdk-in instructions. A client that sends\n" +
		"a progress token gets a program's console lines as progress; one that can elicit approves the calls\n" +
		"a policy asks about. --session keeps one program state per connection: globals and top-level\n" +
		"declarations of one run_code program are there for the next (run_code's description says so).\n" +
		"The mode defaults to ptc.",
	usage: "mcp [--tools FILE] [--mode ptc|both|native] [--scope NAME] [--workspace DIR] [--allow-bash] [--upstream '[NAME=]CMD ARGS...']... [--upstream-timeout D] [--sdk-in description|instructions] [--languages LIST] [--language typescript|python] [--session] [--seed N] [--trace FILE]",
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
	st.promptLanguageFlag(fs)
	sdkIn := fs.String("sdk-in", sdkInDescription, "where the typed SDK is sent, once: `WHERE` is description (run_code's description, which every client shows the model) or instructions (the server's instructions)")
	session := fs.Bool("session", false, "keep one run_code session per connection: the programs of a connection share their globals and top-level declarations, as in a REPL (closed when the connection ends)")
	var ef evalFlags
	ef.register(fs)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, s, "unexpected argument %q", pos[0])
	}
	if *sdkIn != sdkInDescription && *sdkIn != sdkInInstructions {
		return usageError(fs, s, "--sdk-in %q: want %s or %s", *sdkIn, sdkInDescription, sdkInInstructions)
	}
	closeTrace, err := ef.open(ctx, s, "mcp", &st, false)
	if err != nil {
		return fail(s, err)
	}
	defer func() {
		if err := closeTrace(); err != nil {
			fmt.Fprintf(s.err, "ptcx mcp: %s\n", err)
		}
	}()
	langs, err := st.parseLanguages()
	if err != nil {
		return usageError(fs, s, "%s", err)
	}
	lang, err := st.resolvePromptLanguage(langs)
	if err != nil {
		return usageError(fs, s, "%s", err)
	}
	describe := mcpDescriber(*sdkIn, *session, lang)
	st.describe = &describe
	e, err := st.build(ctx, executor.NewConfig())
	if err != nil {
		return setupFailed(fs, s, err)
	}
	defer e.close()

	instructions, err := mcpInstructions(e, *sdkIn)
	if err != nil {
		return fail(s, err)
	}
	opts := mcpserver.Options{Name: "ptcx", Version: currentVersion(), Instructions: instructions,
		Annotations: e.annotations(!st.noBuiltin), Sessions: *session}
	srv, err := mcpserver.New(e.exec, e.scope, opts)
	if err != nil {
		return fail(s, err)
	}
	notify := func() { mcpserver.NotifyToolsChanged(srv) }
	st.toolsChangedHook.Store(&notify)
	err = srv.Run(ctx, mcpserver.StdioTransport(io.NopCloser(s.in), nopWriteCloser{s.out}))
	if err != nil && !clientGone(err) {
		return fail(s, err)
	}
	return exitOK
}

// Where ptcx mcp sends the SDK (--sdk-in).
const (
	sdkInDescription  = "description"
	sdkInInstructions = "instructions"
)

// mcpInstructions is the server's instructions. The SDK (the tools:sdk
// section: the rules and the declarations) is sent once: in run_code's
// description by default (mcpDescriber), so the instructions keep only the
// tools:ptc-only rule; with --sdk-in instructions, every section is here
// and run_code's description is the registry's short default.
func mcpInstructions(e *env, sdkIn string) (string, error) {
	sections, err := e.promptSections()
	if err != nil {
		return "", err
	}
	var parts []string
	for _, sec := range sections {
		if sec.Name == sdkgen.SectionSDK && sdkIn == sdkInDescription {
			continue
		}
		parts = append(parts, sec.Text)
	}
	return strings.Join(parts, "\n"), nil
}

// mcpDescriber renders run_code's description: with the whole SDK in the
// prompt's language lang (describeWithSDK) unless --sdk-in instructions
// sends it there, then the registry's short default. With sessions
// (--session), run_code's description ends with executor.SessionPrompt
// either way: state persists between calls.
func mcpDescriber(sdkIn string, sessions bool, lang api.Language) registry.Describer {
	var describe registry.Describer
	if sdkIn != sdkInInstructions {
		describe = describeWithSDK(lang)
	}
	if sessions {
		describe = executor.WithSessionPrompt(describe)
	}
	return describe
}

// describeWithSDK renders run_code's description as its base followed by
// the whole tools:sdk section in lang (how to write a program, then the
// declarations: SDKSection, or PythonSDKSection), so that the description
// alone teaches what the instructions would have. The section is the same
// under ptc and both, the only modes with run_code.
func describeWithSDK(lang api.Language) registry.Describer {
	section := sdkgen.SDKSection
	if lang == api.LanguagePython {
		section = sdkgen.PythonSDKSection
	}
	fallback := sdkgen.DescribeRunCodeIn(lang)
	return func(scope, base string, bindable []api.Schema) string {
		sec, err := section(api.ModePTC, bindable)
		if err != nil || sec == "" {
			return fallback(scope, base, bindable)
		}
		return base + "\n\n" + sec
	}
}

// clientGone reports an end of serving that is the client's leaving: ptcx
// was stopped, the client closed its end (EOF), or it did so while the
// server was writing to it (a notification in flight, such as
// tools/list_changed).
func clientGone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE)
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
