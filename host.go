package ptcx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/sdkgen"
	"github.com/ptcx/ptcx/wasmhost"
)

// ErrClosed is what Register and RestoreParked return, and what the
// results of Execute, ExecuteParkable and Parked.Resume carry (code
// INTERNAL), once the host is closed.
var ErrClosed = errors.New("ptcx: the host is closed; build a new one with ptcx.New")

// Host is a ready tool host: a registry, a sandbox and an executor built
// together. It is safe for concurrent use; Close it when done.
type Host struct {
	reg  *registry.Registry
	exec *executor.Executor
	own  *wasmhost.Runtime // the sandbox New started; nil with WithCodeRuntime
	// sessions: WithSessions, whose rule Prompt adds.
	sessions bool
	// languages: WithLanguages', whose section Prompt adds; nil: TypeScript only.
	languages []api.Language
	// promptLanguage is the language Prompt declares the tools in
	// (WithPromptLanguage, checked).
	promptLanguage api.Language
	// parkedTools are WithParkedTools' names: what ExecuteParkable parks on.
	parkedTools map[string]struct{}

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// New builds a host from opts: it declares the mode, registers the tools,
// starts the sandbox (compiling the guest, or loading it from the on-disk
// cache) and builds the executor. A failure names the option or the tool at
// fault; nothing is left running.
//
// New is the one place a registry, a sandbox and an executor are put
// together: the CLI, ptcx serve, trace replay and the benchmark build their
// hosts with it too, so an option added here reaches them all.
func New(ctx context.Context, opts ...Option) (*Host, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("ptcx: New got a nil Option")
		}
		opt(&o)
	}
	if o.err != nil {
		return nil, o.err
	}
	h := &Host{reg: o.registry}
	if h.reg == nil {
		h.reg = registry.New()
	}
	if o.mode != "" {
		if err := h.reg.DeclareMode(registry.Deployment, o.mode); err != nil {
			return nil, fmt.Errorf("ptcx: WithMode: %w", err)
		}
	}
	if o.languages != nil {
		ls, err := api.CheckLanguages(o.languages)
		if err != nil {
			return nil, fmt.Errorf("ptcx: WithLanguages: %w", err)
		}
		h.languages = ls
	}
	pl, err := sdkgen.PromptLanguage(h.languages, string(o.promptLanguage))
	if err != nil {
		return nil, fmt.Errorf("ptcx: WithPromptLanguage: %w", err)
	}
	h.promptLanguage = pl
	describer, describe := o.describer, o.describe
	if o.sdkDescriber {
		describer = sdkgen.DescribeRunCodeIn(pl)
	}
	if o.sessions != nil {
		describer, describe = executor.WithSessionPrompt(describer), true
	}
	if describe {
		h.reg.SetRunCodeDescriber(describer)
	}
	if err := h.register(o.tools); err != nil {
		return nil, fmt.Errorf("ptcx: WithTools: %w", err)
	}
	exCfg := o.exec
	if o.limits != nil {
		exCfg = exCfg.WithLimits(*o.limits)
	}
	if o.seed != nil {
		exCfg = exCfg.WithWorld(wasmhost.World{Seed: *o.seed})
	}
	if o.sessions != nil {
		exCfg = exCfg.WithSessions(*o.sessions)
		h.sessions = true
	}
	if h.languages != nil {
		exCfg = exCfg.WithLanguages(h.languages...)
		h.reg.SetRunCodeLanguages(h.languages)
	}
	if o.parkApprovals {
		exCfg = exCfg.WithApprover(executor.ParkApprovals(parkedElsewhere))
	}
	h.parkedTools = make(map[string]struct{}, len(o.parkedTools))
	for _, n := range o.parkedTools {
		h.parkedTools[n] = struct{}{}
	}
	rt := o.runtime
	if rt == nil {
		own, err := wasmhost.New(ctx, o.sandboxConfig())
		if err != nil {
			return nil, fmt.Errorf("ptcx: starting the sandbox: %w", err)
		}
		h.own, rt = own, own
		for _, l := range h.languages {
			if err := own.Prepare(ctx, l); err != nil {
				_ = h.Close(ctx)
				return nil, fmt.Errorf("ptcx: WithLanguages: %s: %w", l, err)
			}
		}
	}
	ex, err := executor.New(h.reg, exCfg.WithRuntime(rt))
	if err != nil {
		_ = h.Close(ctx)
		return nil, fmt.Errorf("ptcx: %w", err)
	}
	h.exec = ex
	return h, nil
}

// sandboxConfig is the configuration of the sandbox New starts: WithSandbox's
// (default wasmhost.NewConfig()), under WithLimits' ceiling.
func (o *options) sandboxConfig() wasmhost.Config {
	cfg := wasmhost.NewConfig()
	if o.sandbox != nil {
		cfg = *o.sandbox
	}
	if o.limits != nil {
		cfg = cfg.WithLimits(*o.limits)
	}
	return cfg
}

// Register adds tools to the deployment scope. Every tool is checked
// (inferred schemas, names, compiled schemas, duplicates among tools) before
// any is added, so a bad tool adds none; a name already registered on the
// host fails at that tool, after the ones before it were added.
func (h *Host) Register(tools ...Tool) error {
	if h.closed.Load() {
		return ErrClosed
	}
	return h.register(tools)
}

func (h *Host) register(tools []Tool) error {
	scratch := registry.New()
	for _, t := range tools {
		if err := scratch.Register(registry.Deployment, t); err != nil {
			return err
		}
	}
	for _, t := range tools {
		if err := h.reg.Register(registry.Deployment, t); err != nil {
			return err
		}
	}
	return nil
}

// Execute runs one call through the executor's pipeline and returns its
// settled result; it never panics on a tool's behalf. A call decoded from a
// malformed wire item (see OpenAICalls) is not run: its result is the
// INVALID_ARGS error that says what is wrong with it.
func (h *Host) Execute(ctx context.Context, c Call) Result {
	call, refused := h.executorCall(c)
	if refused != nil {
		return *refused
	}
	return h.exec.Execute(ctx, call)
}

// executorCall is c as the executor takes it, or the result of a call
// refused before it reaches the executor.
func (h *Host) executorCall(c Call) (executor.Call, *Result) {
	if c.invalid != nil {
		err := *c.invalid // each result its own error: callers may change theirs
		return executor.Call{}, &Result{ID: c.ID, Tool: c.Name, Text: err.Message, Err: &err}
	}
	if h.closed.Load() {
		err := &Error{Code: api.CodeInternal, Message: ErrClosed.Error(), Cause: ErrClosed}
		return executor.Call{}, &Result{ID: c.ID, Tool: c.Name, Text: err.Message, Err: err}
	}
	if c.Session != "" && !h.sessions {
		// State kept without WithSessions would persist where the model was
		// never told it does (Prompt and run_code's description say so only
		// with it).
		err := &Error{Code: api.CodeInvalidArgs, Message: fmt.Sprintf(
			"call %s names session %q, but this host was built without ptcx.WithSessions: add the option, or leave Session empty", c.ID, c.Session)}
		return executor.Call{}, &Result{ID: c.ID, Tool: c.Name, Text: err.Message, Err: err}
	}
	call := executor.Call{ID: c.ID, Scope: c.Scope, Name: c.Name, Args: c.Args, Session: c.Session, Plan: c.Plan}
	if c.Seed != nil {
		call.World = &wasmhost.World{Seed: *c.Seed}
	}
	return call, nil
}

// Close stops the sandbox the host started (not one given with
// WithCodeRuntime), ending the programs still running. It is idempotent:
// later calls return the first call's error.
func (h *Host) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		h.closed.Store(true)
		if h.own != nil {
			h.closeErr = h.own.Close(ctx)
		}
	})
	return h.closeErr
}

// Registry returns the registry underneath, for what the front door does
// not cover (scopes, restrictions, per-scope modes).
func (h *Host) Registry() *registry.Registry { return h.reg }

// Executor returns the executor underneath.
func (h *Host) Executor() *executor.Executor { return h.exec }
