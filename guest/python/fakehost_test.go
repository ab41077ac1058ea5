package python

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// A fake host for the guest ABI (docs/abi.md): the imports of module ptcx
// as wasmhost provides them, checking what the guest passes as strictly
// (an unbound name, a bad log level, a second result or invalid result JSON
// fail the export, as a trap would), and recording it per run.

// call is one nested call the guest registered.
type call struct {
	ID   int32
	Name string
	Args string
}

// run is one instance's state on the fake host's side.
type run struct {
	mod      api.Module
	bound    map[string]bool
	refuse   int32 // when not 0, call returns it
	calls    []call
	nextID   int32
	timers   map[int32]int32 // id -> delay ms
	timerSeq []int32         // ids in the order set
	nextTim  int32
	logs     []string
	result   *string
	errJSON  *string
	polls    int
	stdout   bytes.Buffer
	stderr   bytes.Buffer
	ctx      context.Context
	failures []string // what a real host would have trapped on
}

type runKey struct{}

func runOf(ctx context.Context) *run { return ctx.Value(runKey{}).(*run) }

func (r *run) trap(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	r.failures = append(r.failures, msg)
	panic(msg)
}

func readString(r *run, ptr, n uint32) string {
	b, ok := r.mod.Memory().Read(ptr, n)
	if !ok {
		r.trap("out of range: %d+%d", ptr, n)
	}
	return string(b)
}

func instantiateHost(ctx context.Context, rt wazero.Runtime) error {
	_, err := rt.NewHostModuleBuilder("ptcx").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, np, nl, ap, al uint32) int32 {
		r := runOf(ctx)
		name := readString(r, np, nl)
		args := readString(r, ap, al)
		if !r.bound[name] && name != "$handle" {
			r.trap("call of %q, which is not bound", name)
		}
		if !json.Valid([]byte(args)) {
			r.trap("call of %q with invalid JSON %q", name, args)
		}
		if r.refuse != 0 {
			return r.refuse
		}
		r.nextID++
		r.calls = append(r.calls, call{r.nextID, name, args})
		return r.nextID
	}).Export("call").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, level int32, p, n uint32) {
		r := runOf(ctx)
		if level < 0 || level > 4 {
			r.trap("log level %d", level)
		}
		s := readString(r, p, n)
		if !utf8.ValidString(s) {
			r.trap("log line not UTF-8: %q", s)
		}
		r.logs = append(r.logs, []string{"", "[info] ", "[debug] ", "[warn] ", "[error] "}[level]+s)
	}).Export("log").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, ms int32) int32 {
		r := runOf(ctx)
		r.nextTim++
		r.timers[r.nextTim] = ms
		r.timerSeq = append(r.timerSeq, r.nextTim)
		return r.nextTim
	}).Export("timer_set").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, id int32) {
		delete(runOf(ctx).timers, id)
	}).Export("timer_clear").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, p, n uint32) {
		r := runOf(ctx)
		s := readString(r, p, n)
		if r.result != nil || r.errJSON != nil {
			r.trap("a second outcome: result %s", s)
		}
		if !json.Valid([]byte(s)) {
			r.trap("result is not JSON: %q", s)
		}
		r.result = &s
	}).Export("result").
		NewFunctionBuilder().WithFunc(func(ctx context.Context, p, n uint32) {
		r := runOf(ctx)
		s := readString(r, p, n)
		if r.result != nil || r.errJSON != nil {
			r.trap("a second outcome: error %s", s)
		}
		var e guestError
		if err := json.Unmarshal([]byte(s), &e); err != nil || e.Message == "" ||
			(e.Kind != "exception" && e.Kind != "syntax" && e.Kind != "memory" && e.Kind != "invalid-output") {
			r.trap("malformed error %q", s)
		}
		r.errJSON = &s
	}).Export("error").
		NewFunctionBuilder().WithFunc(func(ctx context.Context) int32 {
		runOf(ctx).polls++
		return 0
	}).Export("poll").
		Instantiate(ctx)
	return err
}

// guestError is the error JSON (docs/abi.md).
type guestError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Stack   string `json:"stack"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

// host is one wazero runtime with the fake host and python.wasm compiled,
// shared by the tests of one test binary (a cold compile takes seconds).
var host struct {
	once     sync.Once
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	err      error
}

// sharedCache is ptcx's own compilation cache (wasmhost.DefaultCacheDir's
// directory, keyed by the module's hash and wazero's version), or nil
// without a user cache directory: a test binary built with -race, whose
// compiler is instrumented, takes about a minute to compile python.wasm,
// and finds there what an uninstrumented build compiled (make test warms
// it first).
func sharedCache() wazero.CompilationCache {
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "ptcx", "wazero"))
	if err != nil {
		return nil
	}
	return cache
}

func compiledGuest(tb testing.TB) (wazero.Runtime, wazero.CompiledModule) {
	tb.Helper()
	b := requireBuilt(tb)
	host.once.Do(func() {
		ctx := context.Background()
		// CloseOnContextDone: FuzzStart cuts a program that loops.
		cfg := wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true)
		if cache := sharedCache(); cache != nil {
			cfg = cfg.WithCompilationCache(cache)
		}
		host.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
		wasi_snapshot_preview1.MustInstantiate(ctx, host.rt)
		if host.err = instantiateHost(ctx, host.rt); host.err != nil {
			return
		}
		host.compiled, host.err = host.rt.CompileModule(ctx, b)
	})
	if host.err != nil {
		tb.Fatalf("compile python.wasm: %v", host.err)
	}
	return host.rt, host.compiled
}

// guest is one instance of python.wasm, initialised (ptcx_init).
type guest struct {
	tb testing.TB
	r  *run
	fn map[string]api.Function
}

var exports = []string{"ptcx_abi_version", "ptcx_buffer", "ptcx_init", "ptcx_start", "ptcx_resume",
	"ptcx_timer", "ptcx_restored", "ptcx_next", "ptcx_stalled"}

func newGuest(tb testing.TB) *guest {
	tb.Helper()
	rt, compiled := compiledGuest(tb)
	g := instantiateGuest(tb, rt, compiled)
	tb.Cleanup(g.close)
	if st := g.call("ptcx_init", 0, 0); st != 0 {
		tb.Fatalf("ptcx_init: %d; error %v; stderr %s", st, g.r.errJSON, g.r.stderr.String())
	}
	return g
}

func instantiateGuest(tb testing.TB, rt wazero.Runtime, compiled wazero.CompiledModule) *guest {
	tb.Helper()
	return instantiateWith(tb, rt, compiled, []string{"_initialize"}, 7)
}

// instantiateWith instantiates python.wasm running the start functions
// given, its random source the byte seed repeated.
func instantiateWith(tb testing.TB, rt wazero.Runtime, compiled wazero.CompiledModule, start []string, seed byte) *guest {
	tb.Helper()
	r := &run{timers: map[int32]int32{}, ctx: context.Background()}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions(start...).
		WithStdout(&r.stdout).WithStderr(&r.stderr).
		WithRandSource(repeated(seed)).
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(libDir, guestLib))
	ctx := context.WithValue(context.Background(), runKey{}, r)
	mod, err := rt.InstantiateModule(ctx, compiled, cfg)
	if err != nil {
		tb.Fatalf("instantiate python.wasm: %v", err)
	}
	r.mod = mod
	g := &guest{tb: tb, r: r, fn: map[string]api.Function{}}
	for _, name := range exports {
		f := mod.ExportedFunction(name)
		if f == nil {
			tb.Fatalf("python.wasm does not export %s", name)
		}
		g.fn[name] = f
	}
	return g
}

func (g *guest) close() { g.r.mod.Close(context.Background()) }

// repeated is a random source of one byte, without end: a session's every
// program reads 32 bytes of it (runtime.py's reseed), and a source of 1 MiB
// ran dry after 32,768 programs (EIO, "starting the program failed").
type repeated byte

func (r repeated) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// call calls an export and returns its i32 result; a trap fails the test.
func (g *guest) call(name string, args ...uint64) int32 {
	g.tb.Helper()
	st, err := g.try(name, args...)
	if err != nil {
		g.tb.Fatalf("%s trapped: %v (host failures %v); stderr: %s", name, err, g.r.failures, g.r.stderr.String())
	}
	return st
}

func (g *guest) try(name string, args ...uint64) (int32, error) {
	ctx := context.WithValue(g.r.ctx, runKey{}, g.r)
	res, err := g.fn[name].Call(ctx, args...)
	if err != nil {
		return 0, err
	}
	if len(res) == 0 {
		return 0, nil
	}
	return int32(res[0]), nil
}

// write puts b in the exchange buffer, NUL-ended, and returns its address.
func (g *guest) write(b []byte) uint64 {
	g.tb.Helper()
	p := uint32(g.call("ptcx_buffer", uint64(len(b)+1)))
	if p == 0 || !g.r.mod.Memory().Write(p, append(b, 0)) {
		g.tb.Fatalf("ptcx_buffer(%d) = %d", len(b)+1, p)
	}
	return uint64(p)
}

// config is the JSON config of ptcx_start (docs/abi.md).
type config struct {
	Code            string   `json:"code"`
	Tools           []string `json:"tools"`
	Session         bool     `json:"session,omitempty"`
	MemoryLimit     int      `json:"memoryLimit,omitempty"`
	MaxPendingCalls int      `json:"maxPendingCalls"`
	MaxCalls        int      `json:"maxCalls"`
	MaxTimers       int      `json:"maxTimers"`
}

func (g *guest) start(c config) int32 {
	g.tb.Helper()
	g.r.bound = map[string]bool{}
	for _, n := range c.Tools {
		g.r.bound[n] = true
	}
	if c.MaxPendingCalls == 0 {
		c.MaxPendingCalls, c.MaxCalls, c.MaxTimers = 128, 10000, 10000
	}
	b, _ := json.Marshal(c)
	return g.call("ptcx_start", g.write(b), uint64(len(b)))
}

func (g *guest) resume(id int32, ok int32, payload string) int32 {
	g.tb.Helper()
	return g.call("ptcx_resume", uint64(uint32(id)), uint64(uint32(ok)), g.write([]byte(payload)), uint64(len(payload)))
}

func (g *guest) timer(id int32) int32 {
	g.tb.Helper()
	return g.call("ptcx_timer", uint64(uint32(id)))
}

// answer is how the test answers a call: ok (0, 1 or 2) and the payload.
type answer func(c call) (int32, string)

// drive runs a started program to its end: while it is pending, it answers
// the calls not yet answered (oldest first), else fires the timer of the
// shortest delay (oldest first). It returns the final status.
func (g *guest) drive(st int32, ans answer) int32 {
	g.tb.Helper()
	answered := 0
	for st == 1 {
		switch {
		case answered < len(g.r.calls):
			c := g.r.calls[answered]
			answered++
			ok, payload := ans(c)
			st = g.resume(c.ID, ok, payload)
		case len(g.r.timers) > 0:
			var best int32
			for _, id := range g.r.timerSeq {
				if d, live := g.r.timers[id]; live && (best == 0 || d < g.r.timers[best]) {
					best = id
				}
			}
			delete(g.r.timers, best)
			st = g.timer(best)
		default:
			st = g.call("ptcx_stalled")
			if st == 1 {
				g.tb.Fatalf("the program waits on nothing")
			}
		}
	}
	return st
}

// outcome is what a run ended with.
func (g *guest) value() string {
	g.tb.Helper()
	if g.r.errJSON != nil {
		g.tb.Fatalf("the program failed: %s; logs %q", *g.r.errJSON, g.r.logs)
	}
	if g.r.result == nil {
		return "<no result>"
	}
	return *g.r.result
}

func (g *guest) failure() guestError {
	g.tb.Helper()
	if g.r.errJSON == nil {
		g.tb.Fatalf("the program did not fail: result %v; logs %q", g.r.result, g.r.logs)
	}
	var e guestError
	if err := json.Unmarshal([]byte(*g.r.errJSON), &e); err != nil {
		g.tb.Fatal(err)
	}
	return e
}

// reset clears the fake host's record for a session's next program.
func (g *guest) reset() {
	g.r.calls, g.r.logs, g.r.result, g.r.errJSON = nil, nil, nil, nil
	g.r.timers, g.r.timerSeq = map[int32]int32{}, nil
}
