package otel_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/trace/otel"
)

// golden is the trace package's golden record: six nested calls, the fifth
// failed.
func golden(t *testing.T) trace.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "golden.jsonl"))
	require.NoError(t, err)
	rec, err := trace.NewReader(bytes.NewReader(b), 0).Next()
	require.NoError(t, err)
	return rec
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestExporter_Export(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
	rec := golden(t)
	rec.Stats.DurationUS = 5000
	five := int64(100)
	rec.Calls[0].StartUS, rec.Calls[0].EndUS = &five, &five
	otel.New(tp).Export(rec)
	require.NoError(t, tp.ForceFlush(t.Context())) // Shutdown would empty mem

	spans := mem.GetSpans()
	require.Len(t, spans, 7, "one span for the execution and one per nested call")
	root := spans[len(spans)-1]
	require.Equal(t, "execute_tool run_code", root.Name)
	a := attrs(root)
	require.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
	require.Equal(t, "run_code", a["gen_ai.tool.name"].AsString())
	require.Equal(t, "golden", a["gen_ai.tool.call.id"].AsString())
	require.Equal(t, "42", a["ptcx.seed"].AsString())
	require.Equal(t, "ok", a["ptcx.outcome"].AsString())
	require.Equal(t, codes.Unset, root.Status.Code)
	require.Equal(t, int64(5000), root.EndTime.Sub(root.StartTime).Microseconds())

	for i, s := range spans[:6] {
		c := rec.Calls[i]
		require.Equal(t, "execute_tool "+c.Tool, s.Name)
		require.Equal(t, root.SpanContext.SpanID(), s.Parent.SpanID(), "call %d's span is the execution's child", c.Index)
		require.Equal(t, root.SpanContext.TraceID(), s.SpanContext.TraceID())
		a := attrs(s)
		require.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
		require.Equal(t, c.Tool, a["gen_ai.tool.name"].AsString())
		require.Equal(t, c.ID, a["gen_ai.tool.call.id"].AsString())
		require.Equal(t, int64(c.Completed), a["ptcx.call.completed"].AsInt64())
	}
	require.Equal(t, int64(100), spans[0].StartTime.Sub(root.StartTime).Microseconds(), "offsets count from the execution's start")
	failed := spans[4]
	require.Equal(t, codes.Error, failed.Status.Code)
	require.Equal(t, "out of stock: C3", failed.Status.Description)
	require.Equal(t, "TOOL_FAILED", attrs(failed)["error.type"].AsString())
}

func TestFromEnv_off(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"} {
		t.Setenv(v, "")
	}
	x, stop, err := otel.FromEnv(t.Context())
	require.NoError(t, err)
	require.Nil(t, x, "no endpoint: export is off")
	require.Nil(t, stop)

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	x, _, err = otel.FromEnv(t.Context())
	require.NoError(t, err)
	require.Nil(t, x, "OTEL_SDK_DISABLED wins")
}

func TestFromEnv_protocol(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	tests := []struct{ name, general, traces, want string }{
		{"grpc", "grpc", "", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ptcx exports OTLP over http/protobuf only"},
		{"http/json", "http/json", "", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"},
		{"the traces variable wins", "grpc", "http/protobuf", ""},
		{"a bad traces variable", "http/protobuf", "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tt.general)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", tt.traces)
			x, stop, err := otel.FromEnv(t.Context())
			if tt.want != "" {
				require.ErrorContains(t, err, tt.want)
				require.Nil(t, x)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, x)
			require.NoError(t, stop(context.Background()))
		})
	}
}

// With an endpoint set, spans reach an OTLP receiver (on loopback) when the
// exporter is stopped.
func TestFromEnv_exports(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" && r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			if len(b) > 0 {
				posts.Add(1)
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	for _, v := range []string{"OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		t.Setenv(v, "")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	x, stop, err := otel.FromEnv(t.Context())
	require.NoError(t, err)
	require.NotNil(t, x)
	x.Export(golden(t))
	require.NoError(t, stop(t.Context()))
	require.Positive(t, posts.Load(), "no spans reached the receiver")
}
