package serve

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/strictjson"
	"github.com/ptcx/ptcx/serve/internal/httperr"
	"github.com/ptcx/ptcx/wasmhost"
)

// Defaults of the zero fields of Config and TenantConfig.
const (
	DefaultMaxBodyBytes   = 1 << 20 // a program of api.MaxCodeBytes and its client tools fit
	DefaultMaxWait        = 30 * time.Second
	DefaultPendingTimeout = 5 * time.Minute
	// DefaultApprovalTimeout is how long a call waits for a person's
	// decision unless quotas.approval_timeout_ms says otherwise: people
	// take hours.
	DefaultApprovalTimeout = 24 * time.Hour
	// MaxApprovalTimeout bounds quotas.approval_timeout_ms: 30 days.
	MaxApprovalTimeout   = 30 * 24 * time.Hour
	DefaultDrainTimeout  = 30 * time.Second
	DefaultReadTimeout   = 30 * time.Second
	DefaultRetention     = 10 * time.Minute
	DefaultMaxRetained   = 1000
	DefaultMaxEvents     = 1000
	DefaultMaxExecutions = 4096
	DefaultMaxConcurrent = 16
	DefaultMaxPending    = 64
	// DefaultParkGrace is server.park_grace_ms's default: a client that
	// answers its tool call within 30 ms (a program's client tool answered
	// by code, not by a person) resumes the execution from memory, its
	// bytes never written to the spill directory.
	DefaultParkGrace = 30 * time.Millisecond
	// DefaultLiveWait is server.live_wait_ms's default: a client that
	// answers its tool call within 20 ms continues the program's live
	// instance, with no suspension and no resume (livewait.go).
	DefaultLiveWait = 20 * time.Millisecond
	// DefaultMaxRetainedBytes is a tenant's budget of retained results and
	// events: 16 results at the default output limit, or thousands of
	// ordinary ones.
	DefaultMaxRetainedBytes = 64 << 20
	// DefaultMaxParkedBytes is a tenant's budget of parked snapshots, on
	// the spill directory or in the store: 64 parked executions (the
	// default max_pending) of 16 MiB each, or thousands of small ones
	// (a small program's snapshot is about 60 KiB compressed).
	DefaultMaxParkedBytes = 1 << 30
	// DefaultMaxStreams is a tenant's event streams open at once: one per
	// execution a client follows, for four times the default
	// max_concurrent.
	DefaultMaxStreams     = 64
	DefaultMaxClientTools = 64
	DefaultRetryAfter     = httperr.DefaultRetryAfter
	maxTenants            = 1024
	maxConfigBytes        = 4 << 20
	defaultDescription    = "a program submitted to ptcx serve"
	storeMemory           = "memory"
)

// Config is `ptcx serve --config FILE`: JSON, or YAML (which it is parsed
// as when the file does not start with "{"). Zero fields mean the
// documented defaults; durations are integer milliseconds.
type Config struct {
	// Listen is the address to listen on, e.g. 127.0.0.1:8080. Required.
	Listen string `json:"listen" yaml:"listen"`
	// Tools is the path of a tools file (as for `ptcx call --tools`),
	// relative to the config file's directory when not absolute.
	Tools string `json:"tools,omitempty" yaml:"tools,omitempty"`
	// Workspace, when set, is a root directory: each tenant gets its own
	// subdirectory (created) with the built-in workspace tools confined to it.
	Workspace string `json:"workspace,omitempty" yaml:"workspace,omitempty"`
	// Store is where execution records live (see StoreConfig). Absent or
	// "memory": in this process only, parked executions included; "dir:" or
	// "nats://": parked executions' bytes too, so that they survive a
	// restart (and, with NATS, move to another node).
	Store *StoreConfig `json:"store,omitempty" yaml:"store,omitempty"`
	// SpillDir is where, without a store shared beyond this process (no
	// store, or "memory"), parked executions' bytes are written while they
	// wait, so that they hold no memory: a new directory under it, removed
	// when the server closes (default: the user's cache directory,
	// $XDG_CACHE_HOME/ptcx/spill or ~/.cache/ptcx/spill). Relative to the
	// config file's directory when not absolute.
	SpillDir string `json:"spill_dir,omitempty" yaml:"spill_dir,omitempty"`
	// Node names this node in the store (default: the host name and pid).
	Node string `json:"node,omitempty" yaml:"node,omitempty"`
	// Lease is how long this node's claim on its executions lasts without
	// renewal, a Go duration in [1s, 5m] (default 10s).
	Lease string `json:"lease,omitempty" yaml:"lease,omitempty"`
	// Overflow, with a nats store, hands new executions this node has no
	// slot for (server.max_executions) to the cluster's work queue instead
	// of answering 429 (default false).
	Overflow bool `json:"overflow,omitempty" yaml:"overflow,omitempty"`
	// TLS, when set, serves HTTPS with this certificate and key.
	TLS *TLSConfig `json:"tls,omitempty" yaml:"tls,omitempty"`
	// Engine is the sandbox's WebAssembly engine: wazero (the default) or
	// wasmtime (a ptcx built by scripts/wasmtime.sh; docs/engines.md).
	Engine string `json:"engine,omitempty" yaml:"engine,omitempty"`
	// LogPrograms puts program text into the logs (default false: never).
	LogPrograms bool `json:"log_programs,omitempty" yaml:"log_programs,omitempty"`
	// LogLevel is the lowest level logged: debug, info (the default), warn
	// or error. `ptcx serve --log-level` overrides it.
	LogLevel string `json:"log_level,omitempty" yaml:"log_level,omitempty"`
	// LogFormat is json (the default: a JSON object a line) or text
	// (slog's key=value lines). `ptcx serve --log-format` overrides it.
	LogFormat string `json:"log_format,omitempty" yaml:"log_format,omitempty"`
	// Server holds the service-wide bounds.
	Server ServerLimits `json:"server,omitempty" yaml:"server,omitempty"`
	// Tenants are the API keys and what each may do. At least one.
	Tenants []TenantConfig `json:"tenants" yaml:"tenants"`

	dir string // the config file's directory, for relative paths
}

// TLSConfig is a certificate and its key, PEM files.
type TLSConfig struct {
	CertFile string `json:"cert_file" yaml:"cert_file"`
	KeyFile  string `json:"key_file" yaml:"key_file"`
}

// ServerLimits are the service-wide bounds.
type ServerLimits struct {
	// MaxBodyBytes caps every request body (default 1 MiB): larger → 413.
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty" yaml:"max_body_bytes,omitempty"`
	// MaxWaitMS caps how long a request waits for an execution to settle or
	// turn pending before answering "running" (default 30 s).
	MaxWaitMS int64 `json:"max_wait_ms,omitempty" yaml:"max_wait_ms,omitempty"`
	// DrainTimeoutMS bounds the wait for live executions on SIGTERM
	// (default 30 s); those still live then are cancelled and reported.
	DrainTimeoutMS int64 `json:"drain_timeout_ms,omitempty" yaml:"drain_timeout_ms,omitempty"`
	// RetentionMS is how long a settled execution stays readable
	// (default 10 min).
	RetentionMS int64 `json:"retention_ms,omitempty" yaml:"retention_ms,omitempty"`
	// MaxRetained caps settled executions kept per tenant (default 1000);
	// the oldest go first.
	MaxRetained int `json:"max_retained,omitempty" yaml:"max_retained,omitempty"`
	// MaxEvents caps the events kept per execution (default 1000); later
	// ones are counted, not kept, and the done event says how many.
	MaxEvents int `json:"max_events,omitempty" yaml:"max_events,omitempty"`
	// ReadTimeoutMS bounds receiving one request, headers and body
	// (default 30 s; headers alone within 10 s).
	ReadTimeoutMS int64 `json:"read_timeout_ms,omitempty" yaml:"read_timeout_ms,omitempty"`
	// MaxExecutions caps live executions over all tenants (default 4096).
	MaxExecutions int `json:"max_executions,omitempty" yaml:"max_executions,omitempty"`
	// ParkGraceMS is how long an execution parked on its client tools
	// stays in memory before its bytes are written to the spill directory
	// (default DefaultParkGrace, 30 ms): a client that answers within it
	// resumes the execution from memory, paying no write and no read of
	// its bytes. With a store shared beyond the process (dir:, nats://)
	// the bytes are written at once, since another node may take the
	// execution over from them, and the program stays in memory beside
	// them for the grace only (a resume within it reads nothing; past it,
	// the store's bytes stand for it). Within the grace the bytes of an
	// execution parked without a store are in memory and count against no
	// quota; quotas.max_parked_bytes counts them once written. Negative:
	// no grace, written (and, with a store, let go of) at once.
	ParkGraceMS int64 `json:"park_grace_ms,omitempty" yaml:"park_grace_ms,omitempty"`
	// LiveWaitMS is how long an execution whose program comes to wait only
	// on its client tools waits for their results live, its instance held,
	// before it parks (default DefaultLiveWait, 20 ms): a client that
	// answers within it continues the live program, paying no suspension
	// and no resume. The instance keeps its concurrent slot and memory
	// meanwhile, and quotas.max_live_waits bounds how many of a tenant's
	// executions wait so at once (past it they park at once). Not in a
	// cluster (dir:, nats://), where a waiting execution's record must name
	// bytes another node can take over. Negative: never wait live, park at
	// once.
	LiveWaitMS int64 `json:"live_wait_ms,omitempty" yaml:"live_wait_ms,omitempty"`
	// HandleOverBytes makes every nested call's result over this many
	// bytes reach its program as a handle (executor.Config.
	// WithHandleOverBytes; docs/security.md, "Handles"). 0, the default:
	// none, only tools declared "handle": true give handles.
	HandleOverBytes int `json:"handle_over_bytes,omitempty" yaml:"handle_over_bytes,omitempty"`
}

// TenantConfig is one tenant.
type TenantConfig struct {
	// Name matches ^[a-z0-9][a-z0-9_-]{0,62}$ (it names the tenant's
	// workspace subdirectory and metric labels).
	Name string `json:"name" yaml:"name"`
	// KeySHA256 is the hex SHA-256 of the tenant's API key.
	KeySHA256 string `json:"key_sha256" yaml:"key_sha256"`
	// Mode is native, ptc or both (default: the tools file's, else ptc).
	Mode api.Mode `json:"mode,omitempty" yaml:"mode,omitempty"`
	// Languages are the languages the tenant's programs may be written in
	// (an execution's language): typescript, python (default: typescript
	// only). Python needs the Python guest in the build (make
	// guest-python) and the wazero engine: the server refuses to start
	// without them.
	Languages []api.Language `json:"languages,omitempty" yaml:"languages,omitempty"`
	// Limits are the tenant's run_code limits: the defaults and the
	// ceiling of every run's.
	Limits RunLimits `json:"limits,omitempty" yaml:"limits,omitempty"`
	// Quotas bound what the tenant holds at once.
	Quotas Quotas `json:"quotas,omitempty" yaml:"quotas,omitempty"`
	// Sessions bound the tenant's program-state sessions (keep_state,
	// session_state.go).
	Sessions SessionQuotas `json:"sessions,omitempty" yaml:"sessions,omitempty"`
	// Policy lays a data-flow policy over the server's tools by name
	// (the workspace's and the tools file's) for this tenant: it only
	// tightens what the tool declares (policy.go). A name that is not one
	// of the server's tools is refused when the server starts.
	Policy map[string]ToolPolicy `json:"policy,omitempty" yaml:"policy,omitempty"`
}

// SessionQuotas bound a tenant's program-state sessions: executions with
// keep_state, whose programs share the state their session's earlier
// programs left (docs/service.md, "Sessions"). A zero field means its default.
type SessionQuotas struct {
	// MaxBytes bounds a session's saved state, compressed (default
	// executor.DefaultMaxSessionBytes, 16 MiB). A state over it after a
	// program is reset, and that program's first log line says so.
	MaxBytes int64 `json:"max_bytes,omitempty" yaml:"max_bytes,omitempty"`
	// WaitMS is how long a keep_state execution waits while its session
	// runs another program, on this node or another (default
	// DefaultSessionWait). Past it: 409, code CONFLICT.
	WaitMS int64 `json:"wait_ms,omitempty" yaml:"wait_ms,omitempty"`
	// IdleSuspendMS is how long a session stays live in a node's memory
	// after its last program (default executor.DefaultSessionIdleSuspend);
	// then it is suspended to bytes there (its saved state in the store is
	// not touched).
	IdleSuspendMS int64 `json:"idle_suspend_ms,omitempty" yaml:"idle_suspend_ms,omitempty"`
	// TTLMS is how long a session is kept after its last program (default
	// DefaultSessionTTL); then its record expires and its next
	// keep_state execution starts afresh.
	TTLMS int64 `json:"ttl_ms,omitempty" yaml:"ttl_ms,omitempty"`
	// MaxSessions caps the tenant's session records in the store at once
	// (default DefaultMaxStateSessions), counted when a keep_state
	// execution would create one. Past it: 429, reason max_state_sessions.
	MaxSessions int64 `json:"max_sessions,omitempty" yaml:"max_sessions,omitempty"`
}

// Quotas bound a tenant's executions.
type Quotas struct {
	// MaxConcurrent caps live executions (running or pending) and direct
	// calls in flight (default 16). Over it: 429, reason max_concurrent.
	MaxConcurrent int `json:"max_concurrent,omitempty" yaml:"max_concurrent,omitempty"`
	// MaxPending caps live executions that declared client_tools or whose
	// programs may ask for an approval, each of which may wait on its
	// client holding a live guest (default 64).
	// Over it: 429, reason max_pending.
	MaxPending int `json:"max_pending,omitempty" yaml:"max_pending,omitempty"`
	// PendingTimeoutMS is how long a client-side call waits for its result
	// (default 5 min, never past the run's wall limit): then the program
	// gets TOOL_TIMEOUT.
	PendingTimeoutMS int64 `json:"pending_timeout_ms,omitempty" yaml:"pending_timeout_ms,omitempty"`
	// ApprovalTimeoutMS is how long a call that asks waits for a person's
	// decision (POST /v1/executions/{id}/approvals; default 24 h, at most
	// MaxApprovalTimeout): then it is declined, with a reason saying so,
	// and the program gets DENIED. Time parked does not count against
	// the run's wall limit.
	ApprovalTimeoutMS int64 `json:"approval_timeout_ms,omitempty" yaml:"approval_timeout_ms,omitempty"`
	// ComputeSecondsPerMinute, when positive, is a token bucket of guest
	// CPU seconds (refilled at this many per minute, holding at most as
	// many), charged for the CPU each run used, not for waits on tools,
	// and for the host's work done for the tenant's requests. Each run
	// reserves its compute limit while it runs; while the bucket less the
	// reservations is not positive: 429, reason compute_seconds, with the
	// Retry-After of its refill. Default 0: no compute quota.
	ComputeSecondsPerMinute float64 `json:"compute_seconds_per_minute,omitempty" yaml:"compute_seconds_per_minute,omitempty"`
	// MaxMemoryMB is the tenant's share of the sandbox's committed guest
	// memory, in MiB: its runs in flight commit their memory limit each,
	// and a run past the share is refused (429, reason memory_share).
	// Default: the sandbox's cap divided by the number of tenants, never
	// less than two runs at the tenant's memory limit. At least the
	// tenant's memory limit.
	MaxMemoryMB int64 `json:"max_memory_mb,omitempty" yaml:"max_memory_mb,omitempty"`
	// MaxRetainedBytes is the tenant's budget of retained results and
	// events (its executions' logs, values, texts, call records and
	// events, live and settled); past it the oldest settled execution is
	// evicted first, read or not, and a live execution's events past it
	// are counted, not kept (default DefaultMaxRetainedBytes).
	MaxRetainedBytes int64 `json:"max_retained_bytes,omitempty" yaml:"max_retained_bytes,omitempty"`
	// MaxParkedBytes is the tenant's budget of parked executions'
	// snapshots (spill directory or store). An execution parks while the
	// tenant's parked bytes are below it (so the last may pass it by its
	// own snapshot); at or past it, new executions with client tools are
	// refused (429, reason parked_bytes), and an execution that comes to
	// park waits for its client live instead, within its memory share
	// (default DefaultMaxParkedBytes).
	MaxParkedBytes int64 `json:"max_parked_bytes,omitempty" yaml:"max_parked_bytes,omitempty"`
	// MaxLiveWaits caps the tenant's executions waiting live for their
	// client (server.live_wait_ms) at once, each holding an instance, a
	// concurrent slot and its memory (default: half of max_concurrent, at
	// least 1); an execution past it parks at once.
	MaxLiveWaits int `json:"max_live_waits,omitempty" yaml:"max_live_waits,omitempty"`
	// MaxStreams caps the tenant's event streams open at once (GET
	// /v1/executions/{id}/events); past it: 429, reason max_streams
	// (default DefaultMaxStreams).
	MaxStreams int `json:"max_streams,omitempty" yaml:"max_streams,omitempty"`
}

var (
	tenantName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	nodeName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)
)

// LoadConfig reads and validates a config file. Errors name the file, the
// line where the decoder gives one, and the field.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := readAtMost(f, maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.dir = dirOf(path)
	return c, nil
}

// ParseConfig decodes and validates a config: JSON when it starts with
// "{", else YAML. Unknown fields are errors.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		if err := decodeStrict(trimmed, &c); err != nil {
			return nil, err
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("yaml: %w", err)
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Config) validate() error {
	if c.Listen == "" {
		return errors.New("field listen: required (e.g. 127.0.0.1:8080)")
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("field listen: %q is not host:port: %w", c.Listen, err)
	}
	if err := CheckLogLevel(c.LogLevel); err != nil {
		return fmt.Errorf("field log_level: %w", err)
	}
	if err := CheckLogFormat(c.LogFormat); err != nil {
		return fmt.Errorf("field log_format: %w", err)
	}
	if c.Engine != "" {
		if err := wasmhost.CheckEngine(c.Engine); err != nil {
			return fmt.Errorf("field engine: %w", err)
		}
	}
	if c.Store != nil {
		if err := c.Store.validate(); err != nil {
			return err
		}
	}
	if err := c.validateCluster(); err != nil {
		return err
	}
	if c.TLS != nil && (c.TLS.CertFile == "" || c.TLS.KeyFile == "") {
		return errors.New("field tls: cert_file and key_file are both required")
	}
	if err := c.Server.validate(); err != nil {
		return err
	}
	if len(c.Tenants) == 0 {
		return errors.New("field tenants: at least one tenant is required")
	}
	if len(c.Tenants) > maxTenants {
		return fmt.Errorf("field tenants: %d tenants is over the maximum of %d", len(c.Tenants), maxTenants)
	}
	names, keys := map[string]bool{}, map[string]bool{}
	for i, t := range c.Tenants {
		if err := t.validate(); err != nil {
			return fmt.Errorf("field tenants[%d]%w", i, err)
		}
		if names[t.Name] {
			return fmt.Errorf("field tenants[%d].name: %q is used by an earlier tenant", i, t.Name)
		}
		if keys[t.KeySHA256] {
			return fmt.Errorf("field tenants[%d].key_sha256: the same key as an earlier tenant's", i)
		}
		names[t.Name], keys[t.KeySHA256] = true, true
	}
	return nil
}

func (s ServerLimits) validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max_body_bytes", s.MaxBodyBytes}, {"max_wait_ms", s.MaxWaitMS}, {"drain_timeout_ms", s.DrainTimeoutMS},
		{"retention_ms", s.RetentionMS}, {"max_retained", int64(s.MaxRetained)}, {"max_events", int64(s.MaxEvents)},
		{"max_executions", int64(s.MaxExecutions)}, {"read_timeout_ms", s.ReadTimeoutMS},
		{"handle_over_bytes", int64(s.HandleOverBytes)},
	} {
		if f.v < 0 {
			return fmt.Errorf("field server.%s: %d is negative (0 means the default)", f.name, f.v)
		}
	}
	return nil
}

func (t TenantConfig) validate() error {
	if !tenantName.MatchString(t.Name) {
		return fmt.Errorf(".name: %q must match %s", t.Name, tenantName)
	}
	if b, err := hex.DecodeString(t.KeySHA256); err != nil || len(b) != 32 {
		return fmt.Errorf(".key_sha256: want 64 hex digits (the SHA-256 of the key, e.g. printf %%s KEY | sha256sum), got %d characters", len(t.KeySHA256))
	}
	if t.Mode != "" {
		if _, err := api.ParseMode(string(t.Mode)); err != nil {
			return fmt.Errorf(".mode: %w", err)
		}
	}
	if t.Languages != nil {
		langs, err := api.CheckLanguages(t.Languages)
		if err != nil {
			return fmt.Errorf(".languages: %w", err)
		}
		for _, l := range langs {
			if mb := t.Limits.MemoryMB; mb > 0 && mb<<20 < l.MinMemoryBytes() {
				return fmt.Errorf(".limits.memory_mb: %d is below the %d MiB a %s program needs, and .languages has %s", mb, l.MinMemoryBytes()>>20, l.Title(), l)
			}
		}
	}
	if err := api.RunCodeLimits(t.Limits).CheckNotNegative(); err != nil {
		return fmt.Errorf(".limits.%w (0 means the default)", err)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"quotas.max_concurrent", int64(t.Quotas.MaxConcurrent)}, {"quotas.max_pending", int64(t.Quotas.MaxPending)},
		{"quotas.pending_timeout_ms", t.Quotas.PendingTimeoutMS}, {"quotas.approval_timeout_ms", t.Quotas.ApprovalTimeoutMS},
		{"quotas.max_memory_mb", t.Quotas.MaxMemoryMB}, {"quotas.max_retained_bytes", t.Quotas.MaxRetainedBytes},
		{"quotas.max_parked_bytes", t.Quotas.MaxParkedBytes}, {"quotas.max_streams", int64(t.Quotas.MaxStreams)},
		{"quotas.max_live_waits", int64(t.Quotas.MaxLiveWaits)},
		{"sessions.max_bytes", t.Sessions.MaxBytes}, {"sessions.wait_ms", t.Sessions.WaitMS},
		{"sessions.idle_suspend_ms", t.Sessions.IdleSuspendMS}, {"sessions.ttl_ms", t.Sessions.TTLMS},
		{"sessions.max_sessions", t.Sessions.MaxSessions},
	} {
		if f.v < 0 {
			return fmt.Errorf(".%s: %d is negative (0 means the default)", f.name, f.v)
		}
	}
	if ms := t.Quotas.ApprovalTimeoutMS; ms > MaxApprovalTimeout.Milliseconds() {
		return fmt.Errorf(".quotas.approval_timeout_ms: %d is over the maximum of %d (%v): an approval nobody decides must end", ms, MaxApprovalTimeout.Milliseconds(), MaxApprovalTimeout)
	}
	if t.Sessions.MaxBytes > MaxSessionStateBytes {
		return fmt.Errorf(".sessions.max_bytes: %d is over the maximum of %d (what a store keeps of one snapshot, less the state's header)", t.Sessions.MaxBytes, MaxSessionStateBytes)
	}
	if m, limit := t.Quotas.MaxMemoryMB<<20, t.Limits.Limits().WithDefaults().MemoryBytes; m > 0 && m < limit {
		return fmt.Errorf(".quotas.max_memory_mb: %d is below the tenant's memory limit of %d MiB (limits.memory_mb): a run at the limit could never be admitted", t.Quotas.MaxMemoryMB, limit>>20)
	}
	if t.Quotas.MaxMemoryMB > 1<<30 {
		return fmt.Errorf(".quotas.max_memory_mb: %d MiB is over the maximum of %d (1 PiB)", t.Quotas.MaxMemoryMB, 1<<30)
	}
	if c := t.Quotas.ComputeSecondsPerMinute; c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return fmt.Errorf(".quotas.compute_seconds_per_minute: %v is not a non-negative number (0 means no compute quota)", c)
	}
	return checkOverlay(t.Policy) // policy.go
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// trailing data, and, at any depth, what strictjson.Check refuses: a key
// twice in an object, text that is not UTF-8 or escapes a lone surrogate,
// a number beyond float64's range, nesting deeper than
// strictjson.MaxDepth. Errors name the line and column, and the place.
// The check is one pass over data before the decoder's; text that is not
// JSON at all is left to the decoder to word.
func decodeStrict(data []byte, v any) error {
	checked := strictjson.Check(data)
	if e, ok := checked.(*strictjson.Error); ok && !e.Syntax {
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(data, err)
	}
	if dec.More() {
		line, col := position(data, dec.InputOffset())
		return fmt.Errorf("line %d, column %d: data after the JSON value", line, col)
	}
	return checked // nil, unless the decoder took what the check did not
}

func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset)
		return fmt.Errorf("line %d, column %d: %v", line, col, syn)
	case errors.As(err, &typ):
		line, col := position(data, typ.Offset)
		return fmt.Errorf("line %d, column %d: field %s: want %s, got JSON %s", line, col, typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.EOF):
		return errors.New("empty body: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, int64(len(data)))
		return fmt.Errorf("line %d, column %d: the JSON ends before its value does (truncated?)", line, col)
	}
	return err
}

func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	line, col = 1, 1
	for _, b := range data[:offset] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func (c *Config) maxBodyBytes() int64 { return orDefault(c.Server.MaxBodyBytes, DefaultMaxBodyBytes) }
func (c *Config) maxWait() time.Duration {
	return ms(c.Server.MaxWaitMS, DefaultMaxWait)
}
func (c *Config) readTimeout() time.Duration { return ms(c.Server.ReadTimeoutMS, DefaultReadTimeout) }
func (c *Config) drainTimeout() time.Duration {
	return ms(c.Server.DrainTimeoutMS, DefaultDrainTimeout)
}
func (c *Config) retention() time.Duration { return ms(c.Server.RetentionMS, DefaultRetention) }
func (c *Config) parkGrace() time.Duration {
	if c.Server.ParkGraceMS < 0 {
		return 0
	}
	return ms(c.Server.ParkGraceMS, DefaultParkGrace)
}
func (c *Config) liveWait() time.Duration {
	if c.Server.LiveWaitMS < 0 {
		return 0
	}
	return ms(c.Server.LiveWaitMS, DefaultLiveWait)
}
func (c *Config) maxRetained() int {
	return int(orDefault(int64(c.Server.MaxRetained), DefaultMaxRetained))
}
func (c *Config) maxEvents() int { return int(orDefault(int64(c.Server.MaxEvents), DefaultMaxEvents)) }
func (c *Config) maxExecutions() int {
	return int(orDefault(int64(c.Server.MaxExecutions), DefaultMaxExecutions))
}

func orDefault(v, d int64) int64 {
	if v == 0 {
		return d
	}
	return v
}

func ms(v int64, d time.Duration) time.Duration {
	if v == 0 {
		return d
	}
	return time.Duration(v) * time.Millisecond
}

// readAtMost reads r, failing when it holds more than limit bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over the maximum of %d bytes", limit)
	}
	return data, nil
}

func dirOf(path string) string { return filepath.Dir(path) }

// resolve returns p relative to the config file's directory.
func (c *Config) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || c.dir == "" {
		return p
	}
	return filepath.Join(c.dir, p)
}
