package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ptcxhost "github.com/ptcx/ptcx" // the front door (the name ptcx is the tests' helper)
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
	"github.com/ptcx/ptcx/toolsfile"
	"github.com/ptcx/ptcx/wasmhost"
	"github.com/ptcx/ptcx/workspace"
)

// setup holds the flags every command shares and builds what they describe.
type setup struct {
	tools           string
	mode            string
	scope           string
	workspace       string
	noBuiltin       bool
	allowBash       bool
	upstreams       repeated
	upstreamTrust   repeated // --upstream-trust: the upstreams whose results are trusted
	upstreamTimeout time.Duration
	engine          string // --engine: the sandbox's WebAssembly engine, "" for the default
	languages       string // --languages: run_code's languages, comma-separated; "" for TypeScript only
	// withPython enables Python whatever --languages says (ptcx run FILE.py).
	withPython bool
	log        io.Writer // where start-up lines and warnings go: the flag set's output, stderr
	// toolsChangedHook, when set, is called after an upstream's tools
	// changed (ptcx mcp tells its clients).
	toolsChangedHook atomic.Pointer[func()]

	// defaultMode applies when neither --mode nor the tools file declares
	// one (ptcx run needs run_code, so it defaults to ptc).
	defaultMode api.Mode
	// observe, when set, adds hooks to the executor's configuration once
	// the registry is built (--seed, --trace: evalflags.go).
	observe func(*registry.Registry, executor.Config) executor.Config
	// describe, when set, renders run_code's description instead of
	// ptcx.New's default, sdkgen.DescribeRunCodeIn the prompt's language
	// (ptcx mcp: mcpDescriber).
	describe *registry.Describer
	// promptLanguage is --language of ptcx prompt and ptcx mcp: the
	// language the prompt declares the tools in; "" for the default
	// (sdkgen.PromptLanguage).
	promptLanguage string
}

// promptLanguageFlag registers --language, the prompt's language (ptcx
// prompt, ptcx mcp).
func (s *setup) promptLanguageFlag(fs *flag.FlagSet) {
	fs.StringVar(&s.promptLanguage, "language", "", "the `LANGUAGE` the prompt declares the tools in: typescript or python, one --languages enables "+
		"(default: typescript when enabled, else the one enabled)")
}

// resolvePromptLanguage checks --language against the languages enabled
// (langs, parseLanguages') and returns the prompt's language.
func (s *setup) resolvePromptLanguage(langs []api.Language) (api.Language, error) {
	l, err := sdkgen.PromptLanguage(langs, s.promptLanguage)
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			err = errors.New(ae.Message)
		}
		return "", fmt.Errorf("--language %q: %w (enable it with --languages)", s.promptLanguage, err)
	}
	return l, nil
}

func (s *setup) flags(fs *flag.FlagSet, withMode bool) {
	fs.StringVar(&s.tools, "tools", "", "a tools `FILE` (JSON) declaring command tools, modes and scopes")
	if withMode {
		fs.StringVar(&s.mode, "mode", "", modeUsage(s.defaultMode))
	}
	fs.StringVar(&s.scope, "scope", registry.Deployment, "the caller's `SCOPE`")
	fs.StringVar(&s.workspace, "workspace", ".", "the `DIR` the built-in file tools are confined to")
	fs.BoolVar(&s.noBuiltin, "no-builtin", false, "do not register the built-in workspace tools (read, write, edit, list, glob, grep)")
	fs.BoolVar(&s.allowBash, "allow-bash", false, "also register the built-in bash tool (runs shell commands in the workspace)")
	fs.Var(&s.upstreams, "upstream", "bridge an MCP server, `[NAME=]COMMAND` (shell-quoted, repeatable): programs call its tools as tools[\"NAME.tool\"]; NAME defaults to one derived from the command")
	fs.Var(&s.upstreamTrust, "upstream-trust", "declare the --upstream `NAME` trusted (repeatable): by default its tools that may reach the open world (MCP's openWorldHint, true unless the tool says false) return untrusted results")
	fs.DurationVar(&s.upstreamTimeout, "upstream-timeout", 0, "bound one call to an --upstream server, and its start, by `D` (default 60s)")
	engineFlag(fs, &s.engine)
	fs.StringVar(&s.languages, "languages", "", "the `LIST` of languages run_code programs may be written in, comma-separated: typescript, python (default: typescript; python needs the Python guest, make guest-python)")
	s.log = fs.Output()
}

// modeUsage is --mode's help: its default is the tools file's mode, else
// the command's (def, ptc for run, batch and mcp), else the registry's own
// (native), stated from the values the code applies (build).
func modeUsage(def api.Mode) string {
	if def == "" {
		def, _ = registry.New().Mode(registry.Deployment)
	}
	return fmt.Sprintf("the deployment's `MODE`: native, ptc or both (default: the tools file's, else %s)", def)
}

// env is what a command runs against.
type env struct {
	reg   *registry.Registry
	exec  *executor.Executor
	rt    *lazyRuntime // the sandbox behind exec
	scope string
	// languages are run_code's (--languages; nil: TypeScript only).
	languages []api.Language
	// promptLanguage is the language the prompt declares the tools in
	// (--language of ptcx prompt and ptcx mcp, resolved).
	promptLanguage api.Language
	bridges        []*mcpbridge.Bridge // the --upstream servers
	cleanup        []func()
}

// needsRunCode fails a command that runs a program in a scope whose mode
// has no run_code (native), saying how to get it.
func (e *env) needsRunCode() error {
	mode, err := e.reg.Mode(e.scope)
	if err != nil {
		return err
	}
	if mode.HasRunCode() {
		return nil
	}
	return fmt.Errorf("scope %q is in %s mode (from --mode or the tools file), which has no run_code: "+
		"add --mode ptc (or both), or set \"mode\": \"ptc\" in the tools file", e.scope, mode)
}

func (e *env) close() {
	for i := len(e.cleanup) - 1; i >= 0; i-- {
		e.cleanup[i]()
	}
}

// build loads the tools file and the built-in tools, applies the mode and
// checks the scope. The sandbox is started on first use only.
func (s *setup) build(ctx context.Context, cfg executor.Config) (*env, error) {
	var mode api.Mode
	if s.mode != "" {
		m, err := api.ParseMode(s.mode)
		if err != nil {
			return nil, usage{err}
		}
		mode = m
	}
	if s.allowBash && s.noBuiltin {
		return nil, usage{errors.New("--allow-bash adds a built-in tool: it cannot go with --no-builtin")}
	}
	if err := engineEnvError(s.engine); err != nil {
		return nil, usage{err}
	}
	langs, err := s.parseLanguages()
	if err != nil {
		return nil, usage{err}
	}
	if slices.Contains(langs, api.LanguagePython) {
		if err := wasmhost.CheckPython(s.engine); err != nil {
			return nil, fmt.Errorf("python programs: %w", err)
		}
	}
	promptLang, err := s.resolvePromptLanguage(langs)
	if err != nil {
		return nil, usage{err}
	}
	ups, err := s.parseUpstreams()
	if err != nil {
		return nil, err
	}
	e := &env{reg: registry.New(), scope: s.scope, languages: langs, promptLanguage: promptLang}
	ok := false
	defer func() {
		if !ok {
			e.close()
		}
	}()

	var file *toolsfile.File
	if s.tools != "" {
		f, err := toolsfile.Load(s.tools)
		if err != nil {
			return nil, err
		}
		file = f
	}
	if mode == "" && (file == nil || file.Mode == "") {
		mode = s.defaultMode
	}
	if !s.noBuiltin {
		if err := s.registerBuiltins(e); err != nil {
			return nil, err
		}
	}
	if file != nil {
		if err := file.Apply(e.reg, mode); err != nil {
			if !s.noBuiltin {
				err = fmt.Errorf("%w (if it redefines a built-in tool, add --no-builtin)", err)
			}
			return nil, err
		}
	} else if mode != "" {
		if err := e.reg.DeclareMode(registry.Deployment, mode); err != nil {
			return nil, err
		}
	}
	if _, err := e.reg.Mode(s.scope); err != nil {
		return nil, usage{fmt.Errorf("--scope: %w", err)}
	}
	if err := s.connectUpstreams(ctx, e, ups); err != nil {
		return nil, err
	}

	if s.observe != nil {
		cfg = s.observe(e.reg, cfg)
	}
	rt := &lazyRuntime{engine: s.engine}
	e.rt = rt
	e.cleanup = append(e.cleanup, rt.close)
	opts := []ptcxhost.Option{ptcxhost.WithRegistry(e.reg), ptcxhost.WithExecutor(cfg), ptcxhost.WithCodeRuntime(rt)}
	if s.describe != nil {
		opts = append(opts, ptcxhost.WithRunCodeDescriber(*s.describe))
	}
	if langs != nil {
		opts = append(opts, ptcxhost.WithLanguages(langs...))
	}
	opts = append(opts, ptcxhost.WithPromptLanguage(promptLang))
	h, err := ptcxhost.New(ctx, opts...) // the front door, as any host's: it installs run_code's describer
	if err != nil {
		return nil, err
	}
	e.exec = h.Executor()
	ok = true
	return e, nil
}

// parseLanguages reads --languages (with Python added by withPython): nil
// for TypeScript only.
func (s *setup) parseLanguages() ([]api.Language, error) {
	var langs []api.Language
	if s.languages != "" {
		for _, name := range strings.Split(s.languages, ",") {
			l, err := api.ParseLanguage(strings.TrimSpace(name))
			if err != nil || strings.TrimSpace(name) == "" {
				return nil, fmt.Errorf("--languages %q: %q is not a language: the languages are %s", s.languages, strings.TrimSpace(name), api.JoinLanguages(api.Languages))
			}
			if slices.Contains(langs, l) {
				return nil, fmt.Errorf("--languages %q: %s is given twice", s.languages, l)
			}
			langs = append(langs, l)
		}
	}
	if s.withPython && !slices.Contains(langs, api.LanguagePython) {
		if langs == nil {
			langs = []api.Language{api.LanguageTypeScript}
		}
		langs = append(langs, api.LanguagePython)
	}
	return langs, nil
}

func (s *setup) registerBuiltins(e *env) error {
	info, err := os.Stat(s.workspace)
	if err != nil || !info.IsDir() {
		return usage{fmt.Errorf("--workspace %s: not a directory", s.workspace)}
	}
	ws, err := workspace.New(s.workspace, workspace.Options{AllowBash: s.allowBash})
	if err != nil {
		return fmt.Errorf("--workspace: %w", err)
	}
	e.cleanup = append(e.cleanup, func() { _ = ws.Close() })
	for _, t := range ws.Tools() {
		if err := e.reg.Register(registry.Deployment, t); err != nil {
			return err
		}
	}
	return nil
}

// lazyRuntime starts the sandbox on the first run_code call, so that
// commands that never run a program do not pay for compiling the guest.
type lazyRuntime struct {
	engine string // "" for NewConfig's
	once   sync.Once
	rt     *wasmhost.Runtime
	err    error
}

func (l *lazyRuntime) Run(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error) {
	l.start(ctx)
	if l.err != nil {
		return wasmhost.Outcome{}, fmt.Errorf("starting the sandbox: %w", l.err)
	}
	return l.rt.Run(ctx, p, d)
}

// start builds the sandbox once. Not with the call's context: a first
// call that is cancelled while the guest compiles must not leave the
// sandbox broken for the calls after.
func (l *lazyRuntime) start(ctx context.Context) {
	l.once.Do(func() {
		cfg := wasmhost.NewConfig()
		if l.engine != "" {
			cfg = cfg.WithEngine(l.engine)
		}
		l.rt, l.err = wasmhost.New(context.WithoutCancel(ctx), cfg)
	})
}

func (l *lazyRuntime) close() {
	if l.rt != nil {
		_ = l.rt.Close(context.Background())
	}
}

// buildNoArgs parses the flags of a command that takes no positional
// arguments and builds its env. When ok is false the command returns status
// (help was shown, or the command line or the setup was wrong, and the
// problem was reported).
func (st *setup) buildNoArgs(ctx context.Context, fs *flag.FlagSet, s *stdio, args []string) (e *env, status int, ok bool) {
	pos, status, ok := parse(fs, args)
	if !ok {
		return nil, status, false
	}
	if len(pos) > 0 {
		return nil, usageError(fs, s, "unexpected argument %q", pos[0]), false
	}
	e, err := st.build(ctx, executor.NewConfig())
	if err != nil {
		return nil, setupFailed(fs, s, err), false
	}
	return e, 0, true
}

// usage marks an error as the command line's fault (exit status 2).
type usage struct{ err error }

func (u usage) Error() string { return u.err.Error() }
func (u usage) Unwrap() error { return u.err }
