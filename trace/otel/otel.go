// Package otel exports trace records as OpenTelemetry spans: one span per
// run_code execution and a child execute_tool span per nested call, named
// and attributed after the GenAI semantic conventions (gen_ai.operation.name,
// gen_ai.tool.name, gen_ai.tool.call.id). It is a package of its own so that
// only the hosts that export spans depend on OpenTelemetry (docs/trace.md).
package otel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/ptcx/ptcx/trace"
)

// InstrumentationName is the tracer's name.
const InstrumentationName = "github.com/ptcx/ptcx/trace/otel"

// Exporter turns records into spans of a tracer provider.
type Exporter struct {
	tracer oteltrace.Tracer
}

// New returns an exporter to tp.
func New(tp oteltrace.TracerProvider) *Exporter {
	return &Exporter{tracer: tp.Tracer(InstrumentationName)}
}

// Export emits rec's spans. Records carry offsets, not instants: the
// execution's span ends now (call Export as the execution settles, from a
// trace.Recorder's sink) and starts its duration (stats.duration_us)
// before; a nested call's span runs from its body's start to its end
// (start_us, end_us), or is an instant at its settlement when its body
// never ran, offsets counted from the execution's start.
func (x *Exporter) Export(rec trace.Record) {
	end := time.Now()
	start := end
	if rec.Stats != nil {
		start = end.Add(-time.Duration(rec.Stats.DurationUS) * time.Microsecond)
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", "run_code"),
		attribute.String("gen_ai.tool.call.id", rec.ID),
		attribute.String("gen_ai.tool.type", "function"),
		attribute.String("ptcx.scope", rec.Scope),
		attribute.String("ptcx.mode", string(rec.Mode)),
		attribute.String("ptcx.program.sha256", rec.Program.SHA256),
		attribute.String("ptcx.outcome", rec.Outcome),
		attribute.Int("ptcx.calls", len(rec.Calls)),
	}
	if rec.Seed != nil {
		attrs = append(attrs, attribute.String("ptcx.seed", fmt.Sprint(*rec.Seed)))
	}
	if rec.Stats != nil {
		attrs = append(attrs, attribute.Int64("ptcx.compute_us", rec.Stats.ComputeUS), attribute.Int64("ptcx.wall_us", rec.Stats.WallUS),
			attribute.Int64("ptcx.memory_bytes", rec.Stats.MemoryBytes))
	}
	ctx, span := x.tracer.Start(context.Background(), "execute_tool run_code",
		oteltrace.WithTimestamp(start), oteltrace.WithSpanKind(oteltrace.SpanKindInternal), oteltrace.WithAttributes(attrs...))
	setError(span, rec.Error)
	for _, c := range rec.Calls {
		from, to := start.Add(us(c.SettledUS)), start.Add(us(c.SettledUS))
		if c.StartUS != nil {
			from = start.Add(us(*c.StartUS))
		}
		if c.EndUS != nil {
			to = start.Add(us(*c.EndUS))
		}
		_, child := x.tracer.Start(ctx, "execute_tool "+c.Tool, oteltrace.WithTimestamp(from), oteltrace.WithSpanKind(oteltrace.SpanKindInternal),
			oteltrace.WithAttributes(
				attribute.String("gen_ai.operation.name", "execute_tool"),
				attribute.String("gen_ai.tool.name", c.Tool),
				attribute.String("gen_ai.tool.call.id", c.ID),
				attribute.String("gen_ai.tool.type", "function"),
				attribute.Int("ptcx.call.index", c.Index),
				attribute.Int("ptcx.call.completed", c.Completed),
			))
		setError(child, c.Error)
		child.End(oteltrace.WithTimestamp(to))
	}
	span.End(oteltrace.WithTimestamp(end))
}

func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

// setError marks a failed span: status Error with the message, and
// error.type the code.
func setError(span oteltrace.Span, e *trace.Error) {
	if e == nil {
		return
	}
	span.SetAttributes(attribute.String("error.type", string(e.Code)))
	span.SetStatus(codes.Error, e.Message)
}

// Endpoint variables: export is on when one of them is set.
var endpointVars = []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// FromEnv returns an exporter sending spans over OTLP (http/protobuf) as
// the standard environment variables say (see ProviderFromEnv), and the
// function that flushes and stops it. When export is off: a nil exporter
// and no error.
func FromEnv(ctx context.Context) (*Exporter, func(context.Context) error, error) {
	tp, shutdown, err := ProviderFromEnv(ctx)
	if tp == nil || err != nil {
		return nil, nil, err
	}
	return New(tp), shutdown, nil
}

// ProviderFromEnv returns a tracer provider exporting over OTLP
// (http/protobuf) as the standard environment variables say
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// _HEADERS, _TIMEOUT, _INSECURE …; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES for the resource; OTEL_TRACES_SAMPLER, default
// parentbased_always_on), and the function that flushes and stops it: the
// one configuration of `ptcx run`, `ptcx batch` and `ptcx serve`. When no
// endpoint is set, or OTEL_SDK_DISABLED is true, export is off: a nil
// provider and no error. A protocol other than http/protobuf is an error.
func ProviderFromEnv(ctx context.Context) (*sdktrace.TracerProvider, func(context.Context) error, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil, nil
	}
	on := false
	for _, v := range endpointVars {
		on = on || os.Getenv(v) != ""
	}
	if !on {
		return nil, nil, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(v); p != "" {
			if p != "http/protobuf" {
				return nil, nil, fmt.Errorf("%s=%s: ptcx exports OTLP over http/protobuf only: set it to http/protobuf, or unset it", v, p)
			}
			break // the traces variable overrides the general one
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry export: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.Environment())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
