package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
	"github.com/ptcx/ptcx/wasmhost"
)

// The serve workloads (serve_e2e, serve_rps, serve_client_tool, the parked
// ones) measure ptcx serve in this process: a serve.Server built from its
// config types, on a sandbox of ptcx's engine and limits of its own,
// listening on 127.0.0.1:0, driven over loopback HTTP by serve/client with
// keep-alive connections. serve never imports bench.

// serveKey is the bench tenant's API key (loopback only).
const serveKey = "ptcx-bench-key-0123456789"

// serveTenant is the bench tenant's name.
const serveTenant = "bench"

// inServe is a running in-process serve: its server, HTTP listener,
// sandbox and client.
type inServe struct {
	srv  *serve.Server
	rt   *wasmhost.Runtime
	hs   *http.Server
	done chan struct{}
	tmp  string // its spill dir, workspace and store, removed on stop
	c    *client.Client
	http *http.Client
}

// serveConfig is the config of a bench serve under dir: one tenant, ptc
// mode, quotas raised for parallel executions (and for parked ones).
func serveConfig(dir string, parked int) *serve.Config {
	sum := sha256.Sum256([]byte(serveKey))
	room := max(parked+64, 128)
	return &serve.Config{
		Listen:   "127.0.0.1:0",
		SpillDir: dir + "/spill",
		Server:   serve.ServerLimits{MaxWaitMS: 60_000, DrainTimeoutMS: 2_000, MaxExecutions: room, MaxRetained: 1000},
		Tenants: []serve.TenantConfig{{
			Name: serveTenant, KeySHA256: hex.EncodeToString(sum[:]), Mode: "ptc",
			Quotas: serve.Quotas{MaxConcurrent: 64, MaxPending: room, MaxParkedBytes: 1 << 40, PendingTimeoutMS: 10 * 60_000},
		}},
	}
}

// startServe starts cfg's server on a sandbox of cfg's (the engine and
// limits PTCX measures) and listens on loopback; conns is how many
// keep-alive connections its client keeps.
func startServe(ctx context.Context, sandbox wasmhost.Config, cfg *serve.Config, tmp string, conns int) (*inServe, error) {
	rt, err := wasmhost.New(ctx, sandbox)
	if err != nil {
		return nil, fmt.Errorf("bench: the serve's sandbox: %w", err)
	}
	srv, err := serve.New(ctx, cfg, serve.Options{Runtime: rt})
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Close(ctx)
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("bench: serve: %w", err)
	}
	hs := srv.HTTPServer()
	s := &inServe{srv: srv, rt: rt, hs: hs, done: make(chan struct{}), tmp: tmp}
	go func() {
		defer close(s.done)
		_ = hs.Serve(l)
	}()
	s.http = keepAlive(conns)
	s.c = client.New("http://"+l.Addr().String(), serveKey, s.http)
	return s, nil
}

// keepAlive is the bench's HTTP client of a serve (and of the http-floor
// peer, which must be the same client): conns keep-alive connections to
// one host, no compression.
func keepAlive(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns,
		IdleConnTimeout: time.Minute, DisableCompression: true}}
}

// stop closes the server, its listener, its sandbox and its files.
func (s *inServe) stop(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := s.hs.Shutdown(sctx)
	<-s.done
	s.http.CloseIdleConnections()
	err = errors.Join(err, s.srv.Close(sctx), s.rt.Close(sctx))
	if s.tmp != "" {
		err = errors.Join(err, os.RemoveAll(s.tmp))
	}
	return err
}

// ensureServe starts b's shared serve, for serve_e2e, serve_rps and
// serve_client_tool, on first use.
func (b *PTCX) ensureServe(ctx context.Context) (*inServe, error) {
	if b.serve != nil {
		return b.serve, nil
	}
	tmp, err := os.MkdirTemp("", "ptcx-bench-serve-")
	if err != nil {
		return nil, err
	}
	s, err := startServe(ctx, b.cfg, serveConfig(tmp, 0), tmp, MaxParallel)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	b.serve = s
	return s, nil
}

// stopServe stops b's shared serve, if it started.
func (b *PTCX) stopServe(ctx context.Context) {
	if b.serve != nil {
		_ = b.serve.stop(ctx)
		b.serve = nil
	}
}

// execute runs p through s to its end, answering the client tool "ask"
// with {"n": 41}, and checks its answer.
func (s *inServe) execute(ctx context.Context, p Program, tools []serve.ClientTool) error {
	req := serve.ExecutionRequest{Code: p.TS, ClientTools: tools}
	// serve_rps runs more at once than a tenant's quota may admit: a
	// refusal the server says to retry is retried until ctx ends.
	st, err := s.c.Run(ctx, req, client.RunOptions{Answer: answerAsk, MaxRetries: math.MaxInt32, MaxElapsed: time.Hour})
	if err != nil {
		return fmt.Errorf("bench: serve: %w", err)
	}
	return checkState(p, st)
}

// checkState checks a settled execution's value against p's answer.
func checkState(p Program, st *serve.ExecutionState) error {
	if st.Status != serve.StatusCompleted {
		msg := st.Text
		if st.Error != nil {
			msg = st.Error.Message
		}
		return fmt.Errorf("bench: serve: execution %s %s: %s", st.ID, st.Status, msg)
	}
	return CheckAnswer(p, st.Value)
}

// askTool is the client tool the client-tool and parked workloads call.
var askTool = serve.ClientTool{Name: "ask", Description: "Ask the client for a number.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)}

// answerAsk answers every pending call with {"n": 41}.
func answerAsk(_ context.Context, pending []serve.PendingCall) ([]serve.ToolResult, error) {
	out := make([]serve.ToolResult, len(pending))
	for i, pc := range pending {
		if pc.Name != askTool.Name {
			return nil, fmt.Errorf("bench: a pending call of %q, not %q", pc.Name, askTool.Name)
		}
		out[i] = serve.ToolResult{ID: pc.ID, OK: true, Value: json.RawMessage(`{"n":41}`)}
	}
	return out, nil
}
