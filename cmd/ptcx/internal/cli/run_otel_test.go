package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// otlpReceiver is an OTLP/HTTP receiver on loopback, set as the export
// endpoint for the test (the other OTel variables cleared): it counts the
// bytes of spans it accepts, and refuses them all while refuse is set.
func otlpReceiver(t *testing.T) (received *atomic.Int64, refuse *atomic.Bool) {
	t.Helper()
	received, refuse = new(atomic.Int64), new(atomic.Bool)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/v1/traces" {
			n, _ := io.Copy(io.Discard, r.Body)
			received.Add(n)
		}
	}))
	t.Cleanup(srv.Close)
	for _, v := range []string{"OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		t.Setenv(v, "")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	return received, refuse
}

// ptcx run exports its execution's span when the OTLP variables are set; a
// receiver that refuses the spans is a warning, and the run's result
// stands.
func TestRun_otelSpans(t *testing.T) {
	bytes, refuse := otlpReceiver(t)
	prog := filepath.Join(t.TempDir(), "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(`return 6 * 7`), 0o644))

	stdout, stderr, status := ptcx(t, "", "run", "--no-builtin", prog)
	require.Equal(t, 0, status, stderr)
	require.Contains(t, stdout, "42")
	require.Positive(t, bytes.Load(), "no spans reached the receiver")
	require.NotContains(t, stderr, "exporting spans")

	refuse.Store(true)
	stdout, stderr, status = ptcx(t, "", "run", "--no-builtin", prog)
	require.Equal(t, 0, status, "a failed export does not fail the run: %s", stderr)
	require.Contains(t, stdout, "42")
	require.Contains(t, stderr, "ptcx run: exporting spans:")

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	_, stderr, status = ptcx(t, "", "run", "--no-builtin", prog)
	require.Equal(t, 1, status, stderr)
	require.Contains(t, stderr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ptcx exports OTLP over http/protobuf only")
}
