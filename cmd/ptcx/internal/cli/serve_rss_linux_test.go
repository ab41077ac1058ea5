//go:build linux

package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// rssLoadEnv, set to 1, makes TestServe_residentMemoryAfterLoad run issue
// #15's full form: 1,000 executions all in flight at once.
const rssLoadEnv = "PTCX_SERVE_LOAD"

// TestServe_residentMemoryAfterLoad is issue #15's "RSS back to baseline
// after the load", measured where it means something: a `ptcx serve`
// process built without the race detector (whose shadow memory is never
// given back), on loopback. The baseline is taken once the server has run
// one execution of each kind (the guest compiled, the pool filled) and gone
// idle (it returns free memory to the OS then: serve.IdleReleaseAfter);
// then a mixed load of 400 executions, 64 at a time (1,000 at once with
// PTCX_SERVE_LOAD=1). Once the executions it kept have passed their
// retention and the server is idle again, its anonymous resident memory
// (RssAnon: its heap, the guests' memories, stacks; the resident pages of
// its binary, which the kernel shares and can drop, are reported beside
// it) must be within 16 MiB (or 25%) of the baseline and its open fds
// within 8; and after a second load of the same, within 8 MiB of where the
// first left it (idle, it reads 35 to 41 MiB from one run to the next on 2
// cores). A leak of 32 KiB per execution fails it (tried).
func TestServe_residentMemoryAfterLoad(t *testing.T) {
	testkit.RequireGuest(t)
	n, conc, timeout := 400, 64, 180*time.Second
	if os.Getenv(rssLoadEnv) == "1" {
		n, conc, timeout = 1000, 1000, 600*time.Second
	}
	bin := filepath.Join(t.TempDir(), "ptcx")
	build := exec.Command("go", "build", "-o", bin, "../..") // cmd/ptcx, the entry point
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	dir := t.TempDir()
	keyA, keyB := "rss-key-a", "rss-key-b"
	hash := func(k string) string { s := sha256.Sum256([]byte(k)); return hex.EncodeToString(s[:]) }
	cfg := map[string]any{
		"listen":    "127.0.0.1:0",
		"workspace": filepath.Join(dir, "ws"),
		"server":    map[string]any{"retention_ms": 2000},
		"tenants": []map[string]any{
			{"name": "a", "key_sha256": hash(keyA), "mode": "ptc", "quotas": map[string]any{"max_concurrent": conc, "max_pending": conc}},
			{"name": "b", "key_sha256": hash(keyB), "mode": "ptc", "quotas": map[string]any{"max_concurrent": 8, "max_pending": 8}},
		},
	}
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cfgPath := filepath.Join(dir, "serve.json")
	require.NoError(t, os.WriteFile(cfgPath, raw, 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ws"), 0o755))

	srv := exec.Command(bin, "serve", "--config", cfgPath)
	stderr, err := srv.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	exited := make(chan error, 1)
	var logs syncBuffer
	addrCh := make(chan string, 1)
	go func() {
		addrRE := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			_, _ = logs.Write([]byte(line + "\n"))
			if m := addrRE.FindStringSubmatch(line); m != nil {
				select {
				case addrCh <- m[1]:
				default:
				}
			}
		}
		exited <- srv.Wait()
	}()
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		<-exited
	})
	var addr string
	select {
	case addr = <-addrCh:
	case <-time.After(60 * time.Second):
		t.Fatalf("ptcx serve did not log its address within 60 s: %s", logs.String())
	}
	pid := srv.Process.Pid

	lctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	defer hc.CloseIdleConnections()
	a := client.New("http://"+addr, keyA, hc)

	// Warm up: one of each kind, so that the baseline has the compiled
	// guest and the filled pool.
	for _, k := range rssMix {
		_, err := rssRunOne(lctx, a, k)
		require.NoError(t, err)
	}
	hc.CloseIdleConnections()
	released := waitRelease(t, lctx, addr, 0)
	base := sample(t, pid)
	t.Logf("baseline, idle after the warm-up (memory released %d times): %s; mappings over 1 MiB resident:\n%s", released, base, bigMappings(pid))

	load := func(round int) procSample {
		start := time.Now()
		var (
			mu   sync.Mutex
			errs []error
			wg   sync.WaitGroup
		)
		sem := make(chan struct{}, conc)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if _, err := rssRunOne(lctx, a, rssMix[i%len(rssMix)]); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Empty(t, errs, "lost or wrong results")
		t.Logf("load %d: %d executions, %d at a time, in %v (%d retried after BUSY so far); right after: %s", round, n, conc, time.Since(start).Round(time.Millisecond), rssBusyRetries.Load(), sample(t, pid))
		hc.CloseIdleConnections()
		// The kept executions pass their retention (2 s), then the idle
		// service releases the memory they and the load held.
		released = waitRelease(t, lctx, addr, released)
		after := sample(t, pid)
		t.Logf("after load %d, idle again (memory released %d times): %s; mappings over 1 MiB resident:\n%s", round, released, after, bigMappings(pid))
		return after
	}
	after1 := load(1)
	bound := base.rss + max(16<<20, base.rss/4)
	require.LessOrEqual(t, after1.rss, bound, "resident memory back to its baseline (within 16 MiB or 25%%) after the load: %s, baseline %s", after1, base)
	require.LessOrEqual(t, after1.fds, base.fds+8, "open fds back to their baseline")
	// A second load leaves it where the first did: what the first kept
	// (the pool's recycled instances, the runtime's grown structures) is
	// reused, not added to.
	after2 := load(2)
	require.LessOrEqual(t, after2.rss, after1.rss+8<<20, "resident memory after a second load within 8 MiB of the first's: %s, after the first %s", after2, after1)
	require.LessOrEqual(t, after2.fds, base.fds+8, "open fds back to their baseline")
	// Threads are reported, not bounded: Go's runtime keeps the threads it
	// started for blocking system calls (the workspace tools' file I/O)
	// parked for reuse, and never exits them; their few KiB each are in the
	// resident memory bounded above, and they follow the concurrency, not
	// the number of executions.
	require.NotContains(t, logs.String(), keyA, "the key is never logged")
}

// procSample is what /proc says of a process.
// rss is the anonymous resident memory (RssAnon: the heap, the guests'
// memories, stacks), the memory the process holds; file is the resident
// pages of files it maps (RssFile: its binary's code, which the kernel
// shares and can drop), reported beside it.
type procSample struct {
	rss, file int64
	fds       int
	threads   int
}

func (s procSample) String() string {
	return fmt.Sprintf("resident %.1f MiB anonymous (+ %.1f MiB of files), %d fds, %d threads",
		float64(s.rss)/(1<<20), float64(s.file)/(1<<20), s.fds, s.threads)
}

func sample(t *testing.T, pid int) procSample {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	var s procSample
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "RssAnon:", "RssFile:":
			kb, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			if f[0] == "RssAnon:" {
				s.rss = kb << 10
			} else {
				s.file = kb << 10
			}
		case "Threads:":
			s.threads, err = strconv.Atoi(f[1])
			require.NoError(t, err)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	s.fds = len(fds)
	return s
}

// bigMappings lists the process's mappings holding more than 1 MiB
// resident, from /proc/PID/smaps: which of the Go heap, the guests'
// memories and the binary a failure is in.
func bigMappings(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return err.Error()
	}
	var out strings.Builder
	var mapping string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			mapping = line
		case len(f) >= 2 && f[0] == "Rss:":
			if kb, err := strconv.Atoi(f[1]); err == nil && kb > 1024 {
				fmt.Fprintf(&out, "\t%6d KiB  %s\n", kb, mapping)
			}
		}
	}
	return out.String()
}

// waitRelease polls the server's metrics until it has released memory
// more than after times (it does once idle for serve.IdleReleaseAfter,
// after executions ended or were evicted), and returns the count.
func waitRelease(t *testing.T, ctx context.Context, addr string, after int) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^ptcx_idle_memory_releases_total (\d+)$`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		m := re.FindSubmatch(body)
		require.NotNil(t, m, "ptcx_idle_memory_releases_total is in /metrics")
		n, err := strconv.Atoi(string(m[1]))
		require.NoError(t, err)
		if n > after {
			return n
		}
		require.True(t, time.Now().Before(deadline), "the idle server released no memory within 60 s (released %d times)", n)
		time.Sleep(250 * time.Millisecond)
	}
}

var rssAsk = serve.ClientTool{Name: "ask", Description: "asks the client", InputSchema: json.RawMessage(`{"type":"object"}`)}

// rssKind is one kind of execution in the load, and the status it must
// end with.
type rssKind struct {
	name   string
	req    serve.ExecutionRequest
	status string
}

var rssMix = []rssKind{
	{"fast", serve.ExecutionRequest{Code: `return 1 + 1`}, serve.StatusCompleted},
	{"slow tool", serve.ExecutionRequest{Code: `await new Promise(r => setTimeout(r, 50)); const l = await tools.list({}); return l.entries.length`}, serve.StatusCompleted},
	{"client tool", serve.ExecutionRequest{Code: `return await tools.ask({q: "x"})`, ClientTools: []serve.ClientTool{rssAsk}}, serve.StatusCompleted},
	{"failing", serve.ExecutionRequest{Code: `throw new Error("planned")`}, serve.StatusFailed},
	{"hostile", serve.ExecutionRequest{Code: `for (;;) {}`, Limits: &serve.RunLimits{TimeoutMS: 100}}, serve.StatusFailed},
	{"heap", serve.ExecutionRequest{Code: `const a = []; for (let i = 0; i < 20000; i++) a.push({i, s: "x".repeat(50)}); return a.length`}, serve.StatusCompleted},
}

// rssBusyRetries counts the requests retried after a BUSY answer and the
// executions started again after a BUSY failure.
var rssBusyRetries atomic.Int64

// rssRunOne runs one execution to settlement with client.Run (answering
// its client calls, retrying what the server says to retry after 20 ms),
// and starts it again after a BUSY failure (nothing ran: 1,000 at once on
// 2 cores are not all admitted within the sandbox's admission wait).
func rssRunOne(ctx context.Context, c *client.Client, k rssKind) (time.Duration, error) {
	start := time.Now()
	// The load oversubscribes the tenant's quotas on purpose: every refusal
	// the server says to retry is retried until ctx ends, not within the
	// client's default bounds.
	o := client.RunOptions{Answer: rssAnswer, RetryWait: 20 * time.Millisecond, MaxRetries: math.MaxInt32, MaxElapsed: time.Hour, Retried: func(e *client.Error) {
		if e.Body.Code == "BUSY" {
			rssBusyRetries.Add(1)
		}
	}}
	for {
		st, err := c.Run(ctx, k.req, o)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", k.name, err)
		}
		if st.Status == serve.StatusFailed && st.Error != nil && st.Error.Code == "BUSY" {
			rssBusyRetries.Add(1)
			select {
			case <-time.After(20 * time.Millisecond):
				continue
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if st.Status != k.status {
			return 0, fmt.Errorf("%s: status %s, want %s (%+v)", k.name, st.Status, k.status, st.Error)
		}
		return time.Since(start), nil
	}
}

// rssAnswer answers every pending client call with "answer".
func rssAnswer(_ context.Context, pending []serve.PendingCall) ([]serve.ToolResult, error) {
	rs := make([]serve.ToolResult, 0, len(pending))
	for _, p := range pending {
		rs = append(rs, serve.ToolResult{ID: p.ID, OK: true, Value: json.RawMessage(`"answer"`)})
	}
	return rs, nil
}
