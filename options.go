package ptcx

import (
	"errors"
	"slices"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// An Option configures New. Options are values: applying one never changes
// another, and the same options can build any number of hosts. Without any,
// New gives a host in native mode with no tools, the default sandbox
// (wasmhost.NewConfig) and the default executor (executor.NewConfig).
type Option func(*options)

type options struct {
	mode     Mode
	registry *registry.Registry // WithRegistry; nil: a new one
	tools    []Tool
	limits   *api.Limits
	sandbox  *wasmhost.Config // nil: wasmhost.NewConfig(), made only when New starts the sandbox
	exec     executor.Config
	runtime  executor.CodeRuntime // shared, not owned; nil: New starts one
	// describer renders run_code's description; New installs it on the
	// registry when describe is set (WithPlainRunCodeDescription clears it).
	describer registry.Describer
	describe  bool
	seed      *uint64
	languages []api.Language // WithLanguages; nil: TypeScript only
	// promptLanguage is WithPromptLanguage's; "": the deployment's default.
	promptLanguage api.Language
	// sdkDescriber: run_code's description is sdkgen's, in the prompt's
	// language (the default; WithPlainRunCodeDescription and
	// WithRunCodeDescriber clear it).
	sdkDescriber bool
	sessions     *executor.SessionLimits // WithSessions (sessions.go)
	// parkApprovals and parkedTools: WithParkedApprovals, WithParkedTools
	// (park.go).
	parkApprovals bool
	parkedTools   []string
	err           error // the first option given a value it cannot take
}

func defaultOptions() options {
	return options{exec: executor.NewConfig(), describe: true, sdkDescriber: true}
}

// WithRegistry builds the host on reg instead of a new, empty registry: a
// registry its caller prepared (scopes, a tools file applied with
// toolsfile, MCP servers bridged with mcpbridge, a trace recorder installed
// on the executor's configuration, which needs the registry first). New
// then changes reg as it would its own: WithMode declares the deployment's
// mode on it, WithTools registers on it, run_code's describer is installed
// on it (but with WithPlainRunCodeDescription), and Host.Register adds to it.
// A nil reg fails New.
func WithRegistry(reg *registry.Registry) Option {
	return func(o *options) {
		if reg == nil {
			o.fail(errors.New("ptcx: WithRegistry got a nil registry"))
			return
		}
		o.registry = reg
	}
}

// fail records err unless an earlier option failed.
func (o *options) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// WithMode declares the deployment's mode: ModeNative (the default: every
// tool is advertised and callable directly), ModePTC (only run_code is
// advertised and callable directly) or ModeBoth. The empty mode keeps the
// default; any other fails New.
func WithMode(m Mode) Option {
	return func(o *options) { o.mode = m }
}

// WithTools registers tools on the deployment scope when the host is built,
// as Host.Register does. Several WithTools add up.
func WithTools(tools ...Tool) Option {
	tools = slices.Clone(tools)
	return func(o *options) { o.tools = append(slices.Clip(o.tools), tools...) }
}

// WithLimits sets the run_code limits: both the sandbox's ceiling and the
// deployment's defaults, which a caller may lower per run, never raise. Zero
// fields mean the documented defaults (api.DefaultLimits). It is
// applied after WithSandbox and WithExecutor, whose own limits it replaces.
// With WithCodeRuntime it sets only the deployment's defaults: the shared
// runtime keeps its own ceiling.
func WithLimits(l Limits) Option {
	return func(o *options) { o.limits = &l }
}

// WithSandbox configures the sandbox runtime New starts (default
// wasmhost.NewConfig(): the on-disk compilation cache, the real clock, the
// default limits). It is ignored with WithCodeRuntime.
func WithSandbox(cfg wasmhost.Config) Option {
	return func(o *options) { o.sandbox = &cfg }
}

// WithExecutor configures the executor: hooks (pre- and post-execute
// listeners, approver, guards, result notifications), MaxParallel, call
// IDs. Its runtime is replaced by the host's.
func WithExecutor(cfg executor.Config) Option {
	return func(o *options) { o.exec = cfg }
}

// WithCodeRuntime runs programs on rt instead of a sandbox of the host's
// own: many hosts can share one compiled guest (a *wasmhost.Runtime is safe
// for concurrent use). The host does not close rt; its owner does, after
// the last host is closed.
func WithCodeRuntime(rt executor.CodeRuntime) Option {
	return func(o *options) { o.runtime = rt }
}

// WithPlainRunCodeDescription keeps run_code's short default description
// (registry.DefaultRunCodeDescription; with WithRegistry, whatever
// description the registry was given). By default run_code's description
// carries the declarations of the tools a program can call, in the
// prompt's language (sdkgen.DescribeRunCodeIn; WithPromptLanguage), so
// that a model that sees only the advertised tools still sees every
// binding's types; a host that puts Host.Prompt's sections in its system
// prompt, which carry the same declarations, can drop them from the
// description with this. It undoes WithRunCodeDescriber.
func WithPlainRunCodeDescription() Option {
	return func(o *options) { o.describer, o.describe, o.sdkDescriber = nil, false, false }
}

// WithRunCodeDescriber renders run_code's description with d instead of
// sdkgen.DescribeRunCode: a host that sends the SDK elsewhere (ptcx mcp
// sends it whole in the description, or in the server's instructions)
// says so here. A nil d gives the short default. It undoes
// WithPlainRunCodeDescription; with WithSessions the description ends with
// the session rule either way.
func WithRunCodeDescriber(d registry.Describer) Option {
	return func(o *options) { o.describer, o.describe, o.sdkDescriber = d, true, false }
}

// WithLanguages sets the languages run_code programs may be written in
// (run_code's "language" argument): TypeScript, the default, and Python
// (CPython 3.13 in the sandbox; a build of ptcx without the Python guest,
// `make guest-python`, fails New when it is enabled). With more than one,
// or Python alone, run_code's advertised schema offers them; with more than
// one, Prompt has a "tools:languages" section saying how a program in the
// language the prompt does not declare the tools in is written
// (WithPromptLanguage). It is applied after WithExecutor.
func WithLanguages(ls ...Language) Option {
	return func(o *options) {
		o.languages = append([]api.Language{}, ls...)
	}
}

// WithPromptLanguage sets the language Prompt declares the tools in, and
// run_code's default description with them (sdkgen.PromptLanguage): l must
// be one WithLanguages enables, or New fails naming those it does. Default:
// the deployment's default language, TypeScript when it is enabled (a
// program without a language is TypeScript), else the one enabled. With
// Python, the "tools:sdk" section has Python's rules and the tools as the
// typed Python SDK declares them (sdkgen.PythonSDKSection); with both
// languages enabled, the other is said in a line of "tools:languages". It
// is applied after WithLanguages.
func WithPromptLanguage(l Language) Option {
	return func(o *options) { o.promptLanguage = l }
}

// WithSeed runs every run_code program in a deterministic world of its own,
// seeded with seed: Math.random, Date, performance.now and the order of
// timers repeat exactly from execution to execution, whatever ran before
// and however many run at once (wasmhost.World). A call's own Call.Seed
// wins over it. Default: the real clock and crypto/rand. It is applied
// after WithExecutor.
func WithSeed(seed uint64) Option {
	return func(o *options) { o.seed = &seed }
}
