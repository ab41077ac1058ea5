package executor

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// DefaultMaxParallel is how many concurrency-safe nested calls may overlap.
const DefaultMaxParallel = 10

// DefaultMaxCodeBytes is the default limit on the size of a run_code
// program, and the most a deployment may set: api.MaxCodeBytes, which
// transpile refuses past (transpile.MaxSourceBytes) and run_code's schema
// counts in characters (registry.MaxCodeLength).
const DefaultMaxCodeBytes = api.MaxCodeBytes

// CodeRuntime runs run_code programs. *wasmhost.Runtime implements it; tests
// use doubles that make nested calls the way a program would.
type CodeRuntime interface {
	Run(ctx context.Context, p wasmhost.Program, d wasmhost.Dispatcher) (wasmhost.Outcome, error)
}

// Config is the executor's behaviour. It is immutable: every With method
// returns a changed copy. The zero value (or NewConfig()) has no runtime (a
// run_code call fails with INTERNAL), MaxParallel 10, the default limits,
// programs of up to DefaultMaxCodeBytes, and no hooks.
type Config struct {
	runtime      CodeRuntime
	maxParallel  int
	maxCodeBytes int
	limits       api.Limits
	pre          []PreExecuteListener
	approver     Approver
	guards       map[string][]Guard
	post         []PostExecuteListener
	onStart      []func(Start)
	onResult     []func(Notification)
	onHandle     []func(HandleEvent) // handlenotify.go
	newID        func() string
	world        *wasmhost.World
	tenant       string
	sessions     SessionLimits  // session.go
	sessionStore SessionStore   // session_store.go
	parkIdle     time.Duration  // idlepark.go
	handleOver   int            // handles.go: results over this many bytes are handles; 0: none
	languages    []api.Language // WithLanguages; nil: TypeScript only
}

// NewConfig returns the default configuration.
func NewConfig() Config { return Config{} }

// WithRuntime sets the code runtime behind run_code.
func (c Config) WithRuntime(rt CodeRuntime) Config {
	c.runtime = rt
	return c
}

// WithLanguages sets the languages run_code runs (run_code's "language"
// argument, api.Language): at least one, each once. A program of a
// language not in the list is refused with INVALID_ARGS naming those that
// are. Default: TypeScript only. The registry's advertised schema says
// them (registry.Registry.SetRunCodeLanguages; ptcx.New sets both).
func (c Config) WithLanguages(ls ...api.Language) Config {
	c.languages = append([]api.Language(nil), ls...)
	if c.languages == nil {
		c.languages = []api.Language{} // given empty: New refuses it
	}
	return c
}

// Languages returns the languages run_code runs, TypeScript first when
// enabled (the default: TypeScript only).
func (c Config) Languages() []api.Language {
	if c.languages == nil {
		return []api.Language{api.LanguageTypeScript}
	}
	return append([]api.Language(nil), c.languages...)
}

// WithMaxParallel sets how many concurrency-safe nested calls of one program
// may run at once (default 10; values below 1 mean the default).
func (c Config) WithMaxParallel(n int) Config {
	c.maxParallel = n
	return c
}

// WithMaxCodeBytes sets the largest run_code program, in bytes of UTF-8
// (default and maximum DefaultMaxCodeBytes; 0 means the default). A larger
// program fails with INVALID_ARGS before any policy sees it and before its
// types are stripped.
func (c Config) WithMaxCodeBytes(n int) Config {
	c.maxCodeBytes = n
	return c
}

// WithLimits sets the deployment's run_code limits: the defaults every run
// gets and the ceiling a caller's lower limits are clamped to. Zero fields
// mean the documented defaults. The memory limit must be at least
// api.MinMemoryBytes and at most api.MaxMemoryBytes (api.Limits.Validate).
func (c Config) WithLimits(l api.Limits) Config {
	c.limits = l
	return c
}

// WithPreExecute appends a pre-execute listener.
func (c Config) WithPreExecute(l PreExecuteListener) Config {
	c.pre = append(slices.Clip(c.pre), l)
	return c
}

// WithApprover sets the approver for calls that ask: a tool declared
// needs_approval, a data-flow rule with on_violation ask, a listener's Ask.
// Without one, such calls are denied.
func (c Config) WithApprover(a Approver) Config {
	c.approver = a
	return c
}

// WithGuard appends a guard to a scope ("" or registry.Deployment for the
// deployment).
func (c Config) WithGuard(scope string, g Guard) Config {
	if scope == "" {
		scope = deploymentScope
	}
	m := maps.Clone(c.guards)
	if m == nil {
		m = map[string][]Guard{}
	}
	m[scope] = append(slices.Clip(m[scope]), g)
	c.guards = m
	return c
}

// WithPostExecute appends a post-execute listener.
func (c Config) WithPostExecute(l PostExecuteListener) Config {
	c.post = append(slices.Clip(c.post), l)
	return c
}

// WithOnStart appends a function called just before every body runs.
func (c Config) WithOnStart(f func(Start)) Config {
	c.onStart = append(slices.Clip(c.onStart), f)
	return c
}

// WithOnResult appends a function called once for every settled execution.
// It runs on the executing goroutine: keep it fast.
func (c Config) WithOnResult(f func(Notification)) Config {
	c.onResult = append(slices.Clip(c.onResult), f)
	return c
}

// WithIDs sets the generator of call IDs for calls that come without one
// (default: "call_" and a process-unique counter).
func (c Config) WithIDs(newID func() string) Config {
	c.newID = newID
	return c
}

// WithWorld gives every run_code call that brings no World of its own
// (Call.World) the deterministic world w: each such program sees the same
// clock and random sequence, whatever ran before it. Default: none (the
// runtime's world).
func (c Config) WithWorld(w wasmhost.World) Config {
	c.world = &w
	return c
}

// WithTenant sets the fairness key of every program this executor runs
// (wasmhost.Program.Tenant): the sandbox serves waiting programs round robin
// across keys, so one tenant's flood cannot starve another's. A service
// gives each tenant's executors their own key. Default: "", one key shared
// by every executor that sets none.
func (c Config) WithTenant(key string) Config {
	c.tenant = key
	return c
}

// ParkIdleGrace is the grace ptcx serve gives WithParkIdle: a program that
// waits longer than 100 ms gives its committed memory back, while one whose
// calls answer sooner (most tool calls) never parks, so it pays no
// suspension.
const ParkIdleGrace = 100 * time.Millisecond

// WithParkIdle parks every run_code program of this executor, run through
// Execute or ExecuteParkable (never a session's), that has waited grace
// with nothing to run: on timers, on its nested calls' bodies, on clients.
// The park is transparent (idlepark.go): the program is suspended, its
// instance and committed memory released (its snapshot, held in memory, is
// charged to the sandbox's committed memory instead); its nested calls in
// flight run on as if it were live; it resumes when one of them answers or
// its next timer is due, its timers and wall time counting the time parked,
// and the caller sees one result, as if it had never parked (docs/
// architecture.md, "Idle parking", says what it costs). 0, the default,
// never parks so; ParkIdleGrace (100 ms) is what ptcx serve uses. A negative grace, or one set with a code runtime
// that cannot resume runs (a *wasmhost.Runtime can), fails New.
func (c Config) WithParkIdle(grace time.Duration) Config {
	c.parkIdle = grace
	return c
}
