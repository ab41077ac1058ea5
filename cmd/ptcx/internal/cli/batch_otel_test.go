package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// With the OTLP environment variables set, a batch exports its executions'
// spans to the endpoint (a receiver on loopback); a protocol it does not
// speak fails the batch before it starts.
func TestBatch_otelSpans(t *testing.T) {
	bytes, _ := otlpReceiver(t)
	items := writeItems(t, []string{item("a", `return 1`), item("b", `throw new Error("no")`)})

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, stderr, status := ptcx(t, "", "batch", "--no-builtin", items)
	require.Equal(t, 1, status, stderr)
	require.Contains(t, stderr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ptcx exports OTLP over http/protobuf only")
	require.Zero(t, bytes.Load())

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	_, stderr, status = ptcx(t, "", "batch", "--no-builtin", items)
	require.Equal(t, 0, status, "a failed item is an outcome, not a batch failure: %s", stderr)
	require.Contains(t, stderr, "2 runs")
	require.Positive(t, bytes.Load(), "no spans reached the receiver")
}
