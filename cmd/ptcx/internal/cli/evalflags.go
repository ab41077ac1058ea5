package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	otelapi "go.opentelemetry.io/otel"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/trace/otel"
	"github.com/ptcx/ptcx/wasmhost"
)

// evalFlags are the flags of evaluation harnesses: --seed and --trace,
// and the OpenTelemetry export the standard OTLP environment variables
// turn on.
type evalFlags struct {
	seed      *uint64
	tracePath string

	file      *os.File
	writer    *trace.Writer
	spans     *otel.Exporter // nil unless OTEL_EXPORTER_OTLP_ENDPOINT (or its traces variant) is set
	stopSpans func(context.Context) error
	warn      io.Writer // where a failed span export is reported
	cmd       string
}

func (ef *evalFlags) register(fs *flag.FlagSet) {
	fs.Func("seed", "run every program in a deterministic world seeded with `N` (a uint64): Math.random, Date, performance.now and timer order repeat exactly", func(v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("want an unsigned 64-bit integer, got %q", v)
		}
		ef.seed = &n
		return nil
	})
	fs.StringVar(&ef.tracePath, "trace", "", "write one JSON line per run_code execution to `FILE` (docs/trace.md; replay it with ptcx replay)")
}

// world is the --seed world, or nil.
func (ef *evalFlags) world() *wasmhost.World {
	if ef.seed == nil {
		return nil
	}
	return &wasmhost.World{Seed: *ef.seed}
}

// open creates (or, with appending, extends) the trace file, starts the
// OpenTelemetry export when the environment asks for it, and makes st
// record into them and apply the seed. It returns a function that closes
// the file and reports a write error; it also flushes the spans, and a
// failed export is reported on s.err as a warning (the runs' results stand).
func (ef *evalFlags) open(ctx context.Context, s *stdio, cmd string, st *setup, appending bool) (func() error, error) {
	ef.warn, ef.cmd = s.err, cmd
	if ef.tracePath != "" {
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if appending {
			flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		f, err := os.OpenFile(ef.tracePath, flags, 0o644)
		if err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		ef.file, ef.writer = f, trace.NewWriter(f)
	}
	spans, stop, err := otel.FromEnv(ctx)
	if err != nil {
		_ = ef.close()
		return nil, err
	}
	ef.spans, ef.stopSpans = spans, stop
	if spans != nil {
		// The SDK reports a failed export to the global handler (by
		// default the log package): say it as this command's warning.
		otelapi.SetErrorHandler(otelapi.ErrorHandlerFunc(func(err error) {
			fmt.Fprintf(ef.warn, "ptcx %s: exporting spans: %s\n", ef.cmd, err)
		}))
	}
	st.observe = func(reg *registry.Registry, cfg executor.Config) executor.Config {
		if w := ef.world(); w != nil {
			cfg = cfg.WithWorld(*w)
		}
		if ef.writer != nil || ef.spans != nil {
			cfg = trace.NewRecorder(reg, ef.export).Install(cfg)
		}
		return cfg
	}
	return ef.close, nil
}

// export writes r to the trace file and the span exporter, whichever are
// open.
func (ef *evalFlags) export(r trace.Record) {
	if ef.writer != nil {
		_ = ef.writer.Write(r)
	}
	if ef.spans != nil {
		ef.spans.Export(r)
	}
}

// spanFlushTimeout bounds the flush of the OpenTelemetry spans at the end
// of a command.
const spanFlushTimeout = 10 * time.Second

func (ef *evalFlags) close() error {
	if ef.stopSpans != nil {
		flush, cancel := context.WithTimeout(context.Background(), spanFlushTimeout)
		if err := ef.stopSpans(flush); err != nil {
			fmt.Fprintf(ef.warn, "ptcx %s: exporting spans: %s\n", ef.cmd, err)
		}
		cancel()
		ef.stopSpans, ef.spans = nil, nil
	}
	if ef.file == nil {
		return nil
	}
	err := ef.writer.Err()
	if cerr := ef.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("--trace: %w", cerr)
	}
	ef.file = nil
	return err
}
