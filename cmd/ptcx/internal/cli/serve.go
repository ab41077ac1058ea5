package cli

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"

	otelapi "go.opentelemetry.io/otel"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/trace/otel"
)

var serveCommand = command{
	name:  "serve",
	brief: "serve the multi-tenant execution API over HTTP",
	summary: "Serve the multi-tenant execution API over HTTP (see docs/service.md): executions with client-side tools,\n" +
		"direct calls, SSE events, MCP at /mcp, /healthz, /readyz and Prometheus /metrics. The config file\n" +
		"(JSON or YAML) names the listen address, the tools file, the workspace root and the tenants.\n" +
		"SIGTERM drains: new work gets 503, live executions get server.drain_timeout_ms, then exit 0.",
	usage: "serve --config FILE [--listen ADDR] [--engine ENGINE] [--log-level LEVEL] [--log-format FORMAT]",
	run:   runServe,
}

func runServe(ctx context.Context, c command, s *stdio, args []string) int {
	fs := newFlags(c, s)
	config := fs.String("config", "", "the service's config `FILE` (JSON or YAML)")
	listen := fs.String("listen", "", "the `ADDR` to listen on, overriding the config's listen")
	logLevel := fs.String("log-level", "", "the lowest `LEVEL` logged: debug, info, warn or error, overriding the config's log_level (default info)")
	logFormat := fs.String("log-format", "", "the logs' `FORMAT`: json (a JSON object a line) or text, overriding the config's log_format (default json)")
	var engine string
	engineFlag(fs, &engine)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, s, "unexpected argument %q", pos[0])
	}
	if *config == "" {
		return usageError(fs, s, "--config is required")
	}
	if err := serve.CheckLogLevel(*logLevel); err != nil {
		return usageError(fs, s, "--log-level: %v", err)
	}
	if err := serve.CheckLogFormat(*logFormat); err != nil {
		return usageError(fs, s, "--log-format: %v", err)
	}
	cfg, err := serve.LoadConfig(*config)
	if err != nil {
		return fail(s, err)
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if engine != "" {
		cfg.Engine = engine
	}
	if err := engineEnvError(cfg.Engine); err != nil {
		return usageError(fs, s, "%v (the config names no engine)", err)
	}
	log, err := serve.NewLogger(s.err, cmp.Or(*logLevel, cfg.LogLevel), cmp.Or(*logFormat, cfg.LogFormat))
	if err != nil { // checked above and by LoadConfig
		return fail(s, err)
	}
	// Spans as `ptcx run` exports them (trace/otel): OTEL_* environment,
	// off without an endpoint.
	tp, stopSpans, err := otel.ProviderFromEnv(ctx)
	if err != nil {
		return fail(s, err)
	}
	opts := serve.Options{Logger: log, Version: currentVersion()}
	if tp != nil {
		opts.TracerProvider = tp
		otelapi.SetErrorHandler(otelapi.ErrorHandlerFunc(func(err error) {
			log.Warn("exporting spans failed", "error", err.Error())
		}))
		defer stopSpans(context.WithoutCancel(ctx))
	}
	// The guests get a slot per core (GOMAXPROCS, which follows the CPU
	// quota); the service keeps one P more, so that its own goroutines
	// (requests, the executor, the tools) run while guests compute on
	// every core, instead of waiting for a guest to yield its thread
	// (docs/service.md, "Scheduling"). GOMAXPROCS set in the environment is
	// taken as it is, for both.
	slots := runtime.GOMAXPROCS(0)
	if os.Getenv("GOMAXPROCS") == "" {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(slots + 1))
	}
	// The port first: serve.New joins the cluster (a store's node writes its
	// lease), which a node that cannot serve must not do.
	l, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fail(s, fmt.Errorf("listening on %s: %w", cfg.Listen, err))
	}
	opts.GuestSlots = slots
	srv, err := serve.New(ctx, cfg, opts)
	if err != nil {
		l.Close()
		return fail(s, err)
	}
	defer srv.Close(context.WithoutCancel(ctx))
	if err := srv.Serve(ctx, l); err != nil {
		return fail(s, err)
	}
	return exitOK
}
