package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
)

func TestServe_usageAndConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "serve.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("listen: 127.0.0.1:1\ntenantz: []\n"), 0o600))
	badLevel := filepath.Join(t.TempDir(), "level.yaml")
	require.NoError(t, os.WriteFile(badLevel, []byte("listen: 127.0.0.1:1\nlog_level: chatty\ntenants: []\n"), 0o600))
	tests := []struct {
		name     string
		args     []string
		status   int
		contains string
	}{
		{"no config", []string{"serve"}, exitUsage, "--config is required"},
		{"positional", []string{"serve", "--config", bad, "extra"}, exitUsage, `unexpected argument "extra"`},
		{"bad field", []string{"serve", "--config", bad}, exitTool, "line 2: field tenantz not found"},
		{"missing file", []string{"serve", "--config", filepath.Join(t.TempDir(), "none.json")}, exitTool, "no such file"},
		{"bad log level", []string{"serve", "--config", bad, "--log-level", "loud"}, exitUsage, `--log-level: "loud" is not a log level: want one of debug, info, warn, error`},
		{"bad log format", []string{"serve", "--config", bad, "--log-format", "xml"}, exitUsage, `--log-format: "xml" is not a log format: want one of json, text`},
		{"config log level", []string{"serve", "--config", badLevel}, exitTool, `field log_level: "chatty" is not a log level`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := ptcx(t, "", tt.args...)
			require.Equal(t, tt.status, status)
			require.Empty(t, out)
			require.Contains(t, errOut, tt.contains)
		})
	}
}

// syncBuffer is a writer safe to read while the server writes its logs.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe_servesThenDrains runs `ptcx serve` in-process on loopback,
// makes one execution, then ends its context as SIGTERM does: it exits 0.
func TestServe_servesThenDrains(t *testing.T) {
	testkit.RequireGuest(t)
	key := "cli-test-key"
	sum := sha256.Sum256([]byte(key))
	cfg := filepath.Join(t.TempDir(), "serve.json")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		`{"listen":"127.0.0.1:1","tenants":[{"name":"t","key_sha256":%q,"mode":"ptc"}]}`, hex.EncodeToString(sum[:]))), 0o600))

	logs := &syncBuffer{}
	sctx, stop := context.WithCancel(context.Background())
	procs := runtime.GOMAXPROCS(0)
	done := make(chan int, 1)
	go func() {
		done <- runServe(sctx, serveCommand, &stdio{in: strings.NewReader(""), out: io.Discard, err: logs}, []string{"--config", cfg, "--listen", "127.0.0.1:0"})
	}()
	addrRE := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	var addr string
	require.Eventually(t, func() bool {
		m := addrRE.FindStringSubmatch(logs.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}, 30*time.Second, 10*time.Millisecond, "the server did not log its address: %s", logs.String())

	req, err := http.NewRequest("POST", "http://"+addr+"/v1/executions", strings.NewReader(`{"code":"return 6 * 7"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, string(body))
	require.Contains(t, string(body), `"value":42`)
	if os.Getenv("GOMAXPROCS") == "" {
		require.Equal(t, procs+1, runtime.GOMAXPROCS(0), "serving, the service keeps a P beside the guests' slots")
	}

	stop()
	select {
	case status := <-done:
		require.Equal(t, exitOK, status, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("ptcx serve did not exit within 30 s of its context ending")
	}
	require.NotContains(t, logs.String(), key, "the key is never logged")
	require.Equal(t, procs, runtime.GOMAXPROCS(0), "GOMAXPROCS is given back when serve returns")
}

// The config's log_format and log_level set the logs; the flags win over
// them.
func TestServe_logFlagsOverrideTheConfig(t *testing.T) {
	testkit.RequireGuest(t)
	sum := sha256.Sum256([]byte("k"))
	cfg := filepath.Join(t.TempDir(), "serve.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"listen: 127.0.0.1:0\nlog_format: text\nlog_level: debug\ntenants: [{name: t, key_sha256: %q}]\n", hex.EncodeToString(sum[:]))), 0o600))
	tests := []struct {
		name  string
		flags []string
		want  *regexp.Regexp
		not   string
	}{
		{"config", nil, regexp.MustCompile(`level=INFO msg=serving addr=127\.0\.0\.1:\d+`), ""},
		{"flags", []string{"--log-format", "json", "--log-level", "info"}, regexp.MustCompile(`"level":"INFO","msg":"serving","addr":"127\.0\.0\.1:\d+"`), "DEBUG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &syncBuffer{}
			sctx, stop := context.WithCancel(context.Background())
			done := make(chan int, 1)
			go func() {
				done <- runServe(sctx, serveCommand, &stdio{in: strings.NewReader(""), out: io.Discard, err: logs}, append([]string{"--config", cfg}, tt.flags...))
			}()
			require.Eventually(t, func() bool { return tt.want.MatchString(logs.String()) }, 30*time.Second, 10*time.Millisecond, logs.String())
			stop()
			select {
			case status := <-done:
				require.Equal(t, exitOK, status, logs.String())
			case <-time.After(30 * time.Second):
				t.Fatal("ptcx serve did not exit within 30 s of its context ending")
			}
			if tt.not != "" {
				require.NotContains(t, logs.String(), tt.not)
			}
		})
	}
}

// ptcx serve exports a server span per request over OTLP when the OTEL_*
// variables name an endpoint (as ptcx run does), flushed as it exits; its
// /mcp reports the version `ptcx version` prints.
func TestServe_otelSpansAndMCPVersion(t *testing.T) {
	testkit.RequireGuest(t)
	received, _ := otlpReceiver(t)
	sum := sha256.Sum256([]byte("k"))
	cfg := filepath.Join(t.TempDir(), "serve.json")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		`{"listen":"127.0.0.1:0","tenants":[{"name":"t","key_sha256":%q}]}`, hex.EncodeToString(sum[:]))), 0o600))
	logs := &syncBuffer{}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- runServe(sctx, serveCommand, &stdio{in: strings.NewReader(""), out: io.Discard, err: logs}, []string{"--config", cfg})
	}()
	addrRE := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	var addr string
	require.Eventually(t, func() bool {
		m := addrRE.FindStringSubmatch(logs.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}, 30*time.Second, 10*time.Millisecond, logs.String())
	req, err := http.NewRequest("GET", "http://"+addr+"/v1/tools", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)

	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer k")
		return http.DefaultTransport.RoundTrip(r)
	})}
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, nil)
	require.NoError(t, err)
	require.Equal(t, currentVersion(), cs.InitializeResult().ServerInfo.Version)
	require.NoError(t, cs.Close())
	version, _, _ := ptcx(t, "", "version")
	require.Contains(t, version, "ptcx "+currentVersion()+" ")
	stop()
	select {
	case status := <-done:
		require.Equal(t, exitOK, status, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("ptcx serve did not exit within 30 s of its context ending")
	}
	require.Positive(t, received.Load(), "no spans reached the receiver")
	require.Contains(t, logs.String(), `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`)
	require.NotContains(t, logs.String(), "exporting spans failed")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
