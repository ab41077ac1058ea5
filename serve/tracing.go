package serve

import (
	"cmp"
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// instrumentationName is the tracer's name: the service's spans beside the
// execution records' (trace/otel).
const instrumentationName = "github.com/ptcx/ptcx/serve"

// traceContext reads W3C traceparent and tracestate. A header that does not
// parse is ignored (the span is a root), never an error: tracing must not
// refuse work.
var traceContext = propagation.TraceContext{}

// startSpan starts the request's server span, a child of the request's
// traceparent when it has a valid one, and returns the context that
// carries it and the function that ends it once the response is written.
// Without a tracer, ctx carries the incoming span context alone (so that the
// logs name the caller's trace) and end does nothing.
func (s *Server) startSpan(ctx context.Context, r *http.Request) (context.Context, func(*statusWriter)) {
	ctx = traceContext.Extract(ctx, propagation.HeaderCarrier(r.Header))
	if s.tracer == nil {
		return ctx, func(*statusWriter) {}
	}
	ctx, span := s.tracer.Start(ctx, r.Method, oteltrace.WithSpanKind(oteltrace.SpanKindServer),
		oteltrace.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path),
			attribute.String("ptcx.request_id", requestID(ctx)),
		))
	return ctx, func(sw *statusWriter) {
		route := cmp.Or(sw.route, "unknown")
		span.SetName(route) // a pattern, "POST /v1/executions": bounded, as the conventions ask
		span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", sw.status))
		if sw.tenant != "" {
			span.SetAttributes(attribute.String("ptcx.tenant", sw.tenant))
		}
		if sw.execution != "" {
			span.SetAttributes(attribute.String("ptcx.execution.id", sw.execution))
		}
		if sw.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.status))
		}
		span.End()
	}
}
