package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/runners"
	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/internal/spill"
	"github.com/ptcx/ptcx/serve/internal/table"
	"github.com/ptcx/ptcx/toolsfile"
	"github.com/ptcx/ptcx/wasmhost"
)

// Options are what New needs beside the Config. The zero value means: a
// sandbox of its own (wasmhost defaults) and logs discarded.
type Options struct {
	// Runtime runs the programs of every tenant; nil starts one, closed by
	// Close.
	Runtime executor.CodeRuntime
	// Logger receives the structured logs (JSON in `ptcx serve`, unless
	// --log-format text). Keys and, unless Config.LogPrograms, program
	// text never appear in them. A line written while serving a request
	// names its request_id (X-Request-ID), and its trace_id and span_id
	// when the request is traced.
	Logger *slog.Logger
	// TracerProvider, when set, gets a server span per request, a child of
	// the request's W3C traceparent (tracing.go); `ptcx serve` sets it from
	// the OTEL_* environment (trace/otel.ProviderFromEnv). Nil: no spans.
	TracerProvider oteltrace.TracerProvider
	// Version is the binary's, which MCP's initialisation reports
	// (default mcpserver.DefaultVersion).
	Version string
	// GuestSlots is how many guests of the Runtime it starts may execute
	// at once (wasmhost.Config.WithGuestSlots); 0 is wasmhost's default,
	// GOMAXPROCS. `ptcx serve` sets it to the cores and GOMAXPROCS one
	// above, so that the service's own goroutines always have a P while
	// guests compute on every core. Negative is an error.
	GuestSlots int
}

// Server is the service. It is safe for concurrent use.
type Server struct {
	cfg     *Config
	log     *slog.Logger
	tracer  oteltrace.Tracer // nil: no spans
	version string           // MCP's server version
	runtime executor.CodeRuntime
	own     *wasmhost.Runtime
	tenants []*tenant
	table   *table.Table[*execution] // every execution, live and settled (serve/internal/table)
	metrics *metrics
	handler http.Handler
	cluster *cluster.Cluster // nil without a store shared beyond this process
	spill   *spill.Spill     // where parked executions' bytes go when cluster is nil
	states  *programSessions // keep_state sessions (session_state.go)

	draining atomic.Bool
	running  sync.WaitGroup   // execution goroutines (begin, end)
	idle     idleRelease      // gives memory back once idle (idle.go)
	runners  *runners.Runners // the goroutines executions run on (runners.go)
	stop     chan struct{}    // ends the sweeper and idle runners
	stopOnce sync.Once
}

// New builds the server: it loads the tools file, builds every tenant's
// registry, executor, workspace and MCP handler, and starts the sandbox
// unless opts gives one.
func New(ctx context.Context, cfg *Config, opts Options) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("serve: nil Config")
	}
	s := &Server{cfg: cfg, log: opts.Logger, runtime: opts.Runtime, stop: make(chan struct{}),
		table: table.New[*execution](cfg.retention(), cfg.maxRetained(), time.Now)}
	s.runners = newRunners(s.stop)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = slog.New(requestLogHandler{s.log.Handler()})
	if opts.TracerProvider != nil {
		s.tracer = opts.TracerProvider.Tracer(instrumentationName)
	}
	s.version = opts.Version
	s.metrics = newMetrics(s.pendingHeld)
	var file *toolsfile.File
	if cfg.Tools != "" {
		f, err := toolsfile.Load(cfg.resolve(cfg.Tools))
		if err != nil {
			return nil, fmt.Errorf("serve: field tools: %w", err)
		}
		file = f
	}
	if opts.GuestSlots < 0 {
		return nil, fmt.Errorf("serve: Options.GuestSlots %d: want a positive count, or 0 for the default", opts.GuestSlots)
	}
	if s.runtime == nil {
		wcfg := wasmhost.NewConfig().WithLimits(ceiling(cfg.Tenants))
		if opts.GuestSlots > 0 {
			wcfg = wcfg.WithGuestSlots(opts.GuestSlots)
		}
		if cfg.Engine != "" {
			wcfg = wcfg.WithEngine(cfg.Engine)
		}
		rt, err := wasmhost.New(ctx, wcfg)
		if err != nil {
			return nil, fmt.Errorf("serve: starting the sandbox: %w", err)
		}
		s.own, s.runtime = rt, rt
	}
	for _, tc := range cfg.Tenants {
		t, err := s.newTenant(ctx, tc, file)
		if err != nil {
			_ = s.Close(ctx)
			return nil, fmt.Errorf("serve: %w", err)
		}
		s.tenants = append(s.tenants, t)
	}
	s.warnOversubscribed()
	if cfg.Store != nil && cfg.Store.Kind != storeMemory {
		c, err := cluster.New(ctx, cfg.clusterSettings(), clusterNode{s}, s.log)
		if err != nil {
			_ = s.Close(ctx)
			return nil, fmt.Errorf("serve: %w", err)
		}
		s.cluster = c
		s.table.OnEvicted(c.Evicted)
		if err := c.AdoptOrphans(ctx); err != nil {
			_ = s.Close(ctx)
			return nil, fmt.Errorf("serve: field store: %w", err)
		}
	}
	s.states = newProgramSessions(s)
	if s.cluster == nil {
		parent := cfg.resolve(cfg.SpillDir)
		if parent == "" {
			p, err := spill.DefaultParent()
			if err != nil {
				_ = s.Close(ctx)
				return nil, fmt.Errorf("serve: %w", err)
			}
			parent = p
		}
		sp, err := spill.Open(parent, cluster.StoreTimeout)
		if err != nil {
			_ = s.Close(ctx)
			return nil, fmt.Errorf("serve: %w", err)
		}
		s.spill = sp
	}
	s.handler = s.withRequest(s.routes())
	go s.sweep()
	return s, nil
}

// warnOversubscribed logs a warning when the tenants' quotas together
// allow more live executions than server.max_executions: then a tenant
// within its quotas may be refused (max_executions) while others hold the
// rest (docs/security.md, "Tenant isolation").
func (s *Server) warnOversubscribed() {
	sum := 0
	for _, t := range s.tenants {
		sum += t.quota.Limits().MaxConcurrent + t.quota.Limits().MaxPending
	}
	if sum > s.cfg.maxExecutions() {
		s.log.Warn("the tenants' quotas allow more live executions than server.max_executions: a tenant within its quotas may be refused while the others hold the rest",
			"max_concurrent_plus_max_pending", sum, "max_executions", s.cfg.maxExecutions())
	}
}

// trimSandbox gives back what the sandbox keeps only to be faster
// (wasmhost.Runtime.Trim), when it can.
func (s *Server) trimSandbox() {
	if t, ok := s.runtime.(interface{ Trim() }); ok {
		t.Trim()
	}
}

// canResume reports whether the sandbox resumes suspended runs (a
// *wasmhost.Runtime with its image): then programs park, on their client
// and when they only wait (executor.Config.WithParkIdle).
func (s *Server) canResume() bool {
	_, ok := s.runtime.(interface {
		Resume(context.Context, []byte, wasmhost.Dispatcher, wasmhost.Resumption) (wasmhost.Outcome, error)
	})
	return ok
}

// sandboxCap is the sandbox's cap on committed guest memory (wasmhost's
// WithMaxCommittedMemory), 0 when the runtime does not report it.
func (s *Server) sandboxCap() int64 {
	if u, ok := s.runtime.(interface{ Usage() wasmhost.Usage }); ok {
		return u.Usage().MaxCommittedBytes
	}
	return 0
}

// Handler is the HTTP API.
func (s *Server) Handler() http.Handler { return s.handler }

// HTTPServer returns an http.Server for the API with every timeout set:
// headers within 10 s (or server.read_timeout_ms if lower), the whole
// request within server.read_timeout_ms, idle connections closed after
// 2 min. Write deadlines are per route (see route.long).
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: min(10*time.Second, s.cfg.readTimeout()),
		ReadTimeout:       s.cfg.readTimeout(),
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Serve serves the API on l until ctx ends, then drains (see Drain) and
// returns nil when the drain succeeded.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := s.HTTPServer()
	if s.cfg.TLS != nil {
		cert, err := tls.LoadX509KeyPair(s.cfg.resolve(s.cfg.TLS.CertFile), s.cfg.resolve(s.cfg.TLS.KeyFile))
		if err != nil {
			return fmt.Errorf("serve: field tls: %w", err)
		}
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	s.log.Info("serving", "addr", l.Addr().String(), "tenants", len(s.tenants), "tls", s.cfg.TLS != nil)
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	report := s.Drain(context.WithoutCancel(ctx))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		_ = hs.Close()
	}
	s.log.Info("drained", "completed", report.Settled, "cancelled", len(report.Cancelled), "parked", len(report.Parked))
	return nil
}

// DrainReport says what a drain did.
type DrainReport struct {
	// Settled is how many live executions settled during the drain.
	Settled int
	// Cancelled are the executions still live at the drain timeout, which
	// were cancelled (each is also logged with its tenant and status).
	Cancelled []string
	// Parked are the executions left parked in the store, resumable after
	// a restart or on another node (each is also logged).
	Parked []string
}

// Drain stops accepting executions and calls (503 DRAINING; reading,
// streaming and answering pending calls still work), waits up to
// server.drain_timeout_ms for running executions to settle or park, then
// reports those left: a parked one stays parked in the store (with one)
// for the next life of this node or another to continue; any other (still
// running, a live pending one, or a parked one without a store to keep
// it) is cancelled. It is idempotent.
func (s *Server) Drain(ctx context.Context) DrainReport {
	s.draining.Store(true)
	before := s.table.LiveCount()
	s.log.Info("draining", "live", before, "timeout_ms", s.cfg.drainTimeout().Milliseconds())
	deadline := time.NewTimer(s.cfg.drainTimeout())
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	kept := func(x *execution) bool { return s.cluster != nil && x.isParked() }
wait:
	for {
		running := 0
		for _, x := range s.table.Live() {
			if !kept(x) {
				running++
			}
		}
		if running == 0 {
			break
		}
		select {
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			break wait
		case <-tick.C:
		}
	}
	var rep DrainReport
	for _, x := range s.table.Live() {
		st := x.state()
		if kept(x) {
			s.log.Info("execution left parked by drain: resumable after a restart or on another node",
				"execution", x.id, "tenant", x.tenant.name, "pending_calls", len(st.Pending))
			rep.Parked = append(rep.Parked, x.id)
			continue
		}
		why := "still running"
		if st.Status == StatusPending {
			why = "pending without a store to keep it, or waiting live (a client tool called beside an in-flight server-side call)"
		}
		s.log.Warn("execution cancelled by drain: not resumable", x.logAttrs("tenant", x.tenant.name,
			"status", st.Status, "why", why, "pending_calls", len(st.Pending))...)
		rep.Cancelled = append(rep.Cancelled, x.id)
		s.cancel(x)
	}
	s.running.Wait()
	rep.Settled = before - len(rep.Cancelled) - len(rep.Parked)
	return rep
}

// Close cancels every live execution (a parked one with a store is given
// up instead, and stays parked there) and releases the tenants and the
// sandbox New started.
func (s *Server) Close(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.draining.Store(true)
	if s.cluster != nil {
		s.releaseParked()
	}
	for _, x := range s.table.Live() {
		s.cancel(x)
	}
	s.running.Wait()
	if s.cluster != nil {
		s.cluster.Close()
	}
	if s.spill != nil {
		if err := s.spill.Close(); err != nil {
			s.log.Warn("removing the spill directory failed", "dir", s.spill.Root(), "error", err)
		}
	}
	for _, t := range s.tenants {
		t.close()
	}
	if s.own != nil {
		return s.own.Close(ctx)
	}
	return nil
}

// sweep evicts settled executions past their retention, and gives memory
// back to the OS once the service is idle (idle.go).
func (s *Server) sweep() {
	t := time.NewTicker(max(s.cfg.retention()/10, time.Second))
	defer t.Stop()
	idle := time.NewTicker(idleCheckEvery)
	defer idle.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			if s.table.Sweep(now) > 0 {
				s.idle.evicted(now)
			}
		case now := <-idle.C:
			if start := time.Now(); s.idle.release(now, s.trimSandbox) {
				s.metrics.releases.Inc()
				s.log.Debug("idle: free memory returned to the OS", "took_ms", time.Since(start).Milliseconds())
			}
		}
	}
}

// begin and end bracket every execution goroutine: Drain and Close wait
// for them, and memory is released only when none runs.
func (s *Server) begin() {
	s.running.Add(1)
	s.idle.begin()
}

func (s *Server) end() {
	s.idle.end(time.Now())
	s.running.Done()
}

// onStart and onResult are every tenant executor's hooks: they turn nested
// calls into the events and call records of the execution they belong to.
func (s *Server) onStart(st executor.Start) {
	if !st.Nested {
		return
	}
	if x := s.table.Lookup(st.Parent); x != nil {
		x.callStarted(st.ID, st.Tool)
	}
}

func (s *Server) onResult(t *tenant, n executor.Notification) {
	if !n.Nested {
		if n.Run != nil && n.Run.IdleParks > 0 {
			s.metrics.idleParks.WithLabelValues(t.name).Add(float64(n.Run.IdleParks))
		}
		return
	}
	if x := s.table.Lookup(n.Parent); x != nil {
		x.callFinished(n.ID, n.Tool, n.Result, n.Duration)
		outcome := "ok"
		if n.Result.Err != nil {
			outcome = string(n.Result.Err.Code)
		}
		s.metrics.nested.WithLabelValues(x.tenant.name, outcome).Inc()
	}
}
