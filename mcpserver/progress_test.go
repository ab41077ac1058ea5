package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpserver"
	"github.com/ptcx/ptcx/registry"
)

// connectWith is connect with server options and client options.
func connectWith(t *testing.T, e *executor.Executor, scope, protocol string, opts mcpserver.Options, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(e, scope, opts)
	require.NoError(t, err)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, copts).
		Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, cs.Close())
		_ = ss.Wait()
	})
	return cs
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu       sync.Mutex
	messages []string
	progress []float64
	got      chan string // every message, for a test that waits for one
}

func newProgressLog() *progressLog { return &progressLog{got: make(chan string, 10000)} }

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.messages = append(p.messages, req.Params.Message)
	p.progress = append(p.progress, req.Params.Progress)
	p.got <- req.Params.Message
}

// snapshot returns the messages in the order of their progress values: the
// client may run its handler for two notifications in either order, and
// after the call's result has reached it.
func (p *progressLog) snapshot() ([]string, []float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	idx := make([]int, len(p.messages))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return p.progress[idx[a]] < p.progress[idx[b]] })
	var msgs []string
	var progress []float64
	for _, i := range idx {
		msgs = append(msgs, p.messages[i])
		progress = append(progress, p.progress[i])
	}
	return msgs, progress
}

// await returns the messages once n have arrived, and checks that no more
// come for a moment.
func (p *progressLog) await(t *testing.T, n int) ([]string, []float64) {
	t.Helper()
	require.Eventually(t, func() bool { m, _ := p.snapshot(); return len(m) >= n }, 20*time.Second, 5*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	return p.snapshot()
}

// callWithToken calls run_code with a progress token.
func callWithToken(t *testing.T, cs *mcp.ClientSession, code string) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: registry.RunCode, Arguments: json.RawMessage(runCodeArgs(t, code))}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(context.Background(), p)
	require.NoError(t, err)
	return res
}

func TestServer_progress_arrivesDuringTheRun(t *testing.T) {
	rt := sharedRuntime(t)
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			log := newProgressLog()
			f := newFixture(t, executor.NewConfig().WithRuntime(rt))
			// wait returns only once the client has seen the line logged
			// before it: the progress is sent while the program runs.
			require.NoError(t, f.reg.Register("ptc", registry.Tool{
				Name: "wait",
				Body: func(ctx context.Context, _ api.Input) (api.Output, error) {
					for {
						select {
						case m := <-log.got:
							if m == "before the call" {
								return api.ValueOutput("seen")
							}
						case <-time.After(20 * time.Second):
							return api.Output{}, fmt.Errorf("the client saw no progress during the run")
						case <-ctx.Done():
							return api.Output{}, ctx.Err()
						}
					}
				},
			}))
			cs := connectWith(t, f.exec, "ptc", proto, mcpserver.Options{}, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
			res := callWithToken(t, cs, `console.log("before the call"); const r = await tools.wait({}); console.warn("after"); return r;`)
			require.False(t, res.IsError, text(t, res))
			require.Contains(t, text(t, res), "seen")
			msgs, progress := log.await(t, 2)
			require.Equal(t, []string{"before the call", "[warn] after"}, msgs)
			require.Equal(t, []float64{1, 2}, progress)
		})
	}
}

func TestServer_progress_noTokenNoProgress(t *testing.T) {
	rt := sharedRuntime(t)
	log := newProgressLog()
	f := newFixture(t, executor.NewConfig().WithRuntime(rt))
	cs := connectWith(t, f.exec, "ptc", "", mcpserver.Options{}, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
	res := callTool(t, cs, registry.RunCode, runCodeArgs(t, `console.log("a"); return 1;`))
	require.False(t, res.IsError, text(t, res))
	msgs, _ := log.await(t, 0)
	require.Empty(t, msgs)
}

func TestServer_progress_maxLines(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name      string
		max, logs int
		want      []string
	}{
		{"below", 3, 2, []string{"line 0", "line 1"}},
		{"at", 3, 3, []string{"line 0", "line 1", "line 2"}},
		{"past", 3, 5, []string{"line 0", "line 1", "line 2",
			"… 2 more console lines were not sent as progress (at most 3 are, and none while the client reads slowly); the result has the logs"}},
		{"none", -1, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := newProgressLog()
			f := newFixture(t, executor.NewConfig().WithRuntime(rt))
			cs := connectWith(t, f.exec, "ptc", "", mcpserver.Options{MaxProgressLines: tt.max}, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
			res := callWithToken(t, cs, fmt.Sprintf(`for (let i = 0; i < %d; i++) console.log("line " + i); return "done";`, tt.logs))
			require.False(t, res.IsError, text(t, res))
			require.Contains(t, text(t, res), fmt.Sprintf("line %d", tt.logs-1), "the result keeps every line")
			msgs, _ := log.await(t, len(tt.want))
			require.Equal(t, tt.want, msgs)
		})
	}
}

func TestServer_progress_longLineIsCut(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name     string
		n, wantN int
	}{
		{"below", 2047, 2047},
		{"at", 2048, 2048},
		{"past", 3000, 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := newProgressLog()
			f := newFixture(t, executor.NewConfig().WithRuntime(rt))
			cs := connectWith(t, f.exec, "ptc", "", mcpserver.Options{}, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
			res := callWithToken(t, cs, fmt.Sprintf(`console.log("x".repeat(%d)); return 1;`, tt.n))
			require.False(t, res.IsError, text(t, res))
			msgs, _ := log.await(t, 1)
			require.Len(t, msgs, 1)
			require.Equal(t, strings.Repeat("x", tt.wantN), msgs[0])
		})
	}
}
