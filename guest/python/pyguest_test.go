package python

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// The build outputs (build.sh), relative to this package's directory, where
// `go test` runs, and where the guest sees the zip's directory.
const (
	wasmFile  = "wasm/python.wasm"
	libDir    = "wasm/lib"
	zipFile   = "wasm/lib/python313.zip"
	guestLib  = "/usr/local/lib"
	outputCap = 4096
)

// requireBuilt returns python.wasm, or skips the test when it (or the zip)
// is not built, unless CI is set: in CI a missing Python guest fails.
func requireBuilt(tb testing.TB) []byte {
	tb.Helper()
	b, err := readBuilt()
	checkBuilt(tb, err, os.Getenv)
	return b
}

func readBuilt() ([]byte, error) {
	b, err := os.ReadFile(wasmFile)
	if err == nil {
		_, err = os.Stat(zipFile)
	}
	return b, err
}

func checkBuilt(tb testing.TB, err error, getenv func(string) string) {
	tb.Helper()
	if err == nil {
		return
	}
	if ci, perr := strconv.ParseBool(getenv("CI")); perr == nil && ci {
		tb.Fatalf("the Python guest is required in CI and missing (make guest-python): %v", err)
		return
	}
	tb.Skipf("skipped: the Python guest is not built (make guest-python): %v", err)
}

// recorder is a testing.TB that records whether the check skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(string, ...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any)          { r.failed = true }
func (r *recorder) Errorf(format string, a ...any) { r.failed = true }

func TestCheckBuilt(t *testing.T) {
	missing := errors.New("open wasm/python.wasm: no such file or directory")
	for _, c := range []struct {
		name string
		err  error
		ci   string
		want string
	}{
		{"present", nil, "true", ""},
		{"present, no CI", nil, "", ""},
		{"missing, no CI", missing, "", "skip"},
		{"missing, CI=false", missing, "false", "skip"},
		{"missing, CI=garbage", missing, "yes please", "skip"},
		{"missing, CI=true", missing, "true", "fail"},
		{"missing, CI=1", missing, "1", "fail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			checkBuilt(r, c.err, func(k string) string {
				if k == "CI" {
					return c.ci
				}
				return ""
			})
			got := ""
			switch {
			case r.failed:
				got = "fail"
			case r.skipped:
				got = "skip"
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// host is one wazero runtime with python.wasm compiled, shared by the tests
// of one test binary (a cold compile takes seconds).
var host struct {
	once     sync.Once
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	err      error
}

func compiledGuest(tb testing.TB) (wazero.Runtime, wazero.CompiledModule) {
	tb.Helper()
	b := requireBuilt(tb)
	host.once.Do(func() {
		ctx := context.Background()
		// CloseOnContextDone: FuzzRun cuts a program that loops.
		host.rt = wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(true))
		wasi_snapshot_preview1.MustInstantiate(ctx, host.rt)
		host.compiled, host.err = host.rt.CompileModule(ctx, b)
	})
	if host.err != nil {
		tb.Fatalf("compile python.wasm: %v", host.err)
	}
	return host.rt, host.compiled
}

// instance is one python.wasm instance and the glue's exports.
type instance struct {
	ctx                        context.Context // of ptcx_py_run's calls; Background unless a test cuts them
	mod                        api.Module
	initFn, run, result, alloc api.Function
	free                       api.Function
	stdout, stderr             bytes.Buffer
}

func newInstance(tb testing.TB, rt wazero.Runtime, compiled wazero.CompiledModule) *instance {
	tb.Helper()
	in := &instance{ctx: context.Background()}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithStdout(&in.stdout).WithStderr(&in.stderr).
		WithFSConfig(wazero.NewFSConfig().WithReadOnlyDirMount(libDir, guestLib))
	mod, err := rt.InstantiateModule(context.Background(), compiled, cfg)
	if err != nil {
		tb.Fatalf("instantiate python.wasm: %v", err)
	}
	in.mod = mod
	for name, f := range map[string]*api.Function{
		"ptcx_py_init": &in.initFn, "ptcx_py_run": &in.run, "ptcx_py_result": &in.result,
		"ptcx_py_malloc": &in.alloc, "ptcx_py_free": &in.free,
	} {
		if *f = mod.ExportedFunction(name); *f == nil {
			tb.Fatalf("python.wasm does not export %s", name)
		}
	}
	return in
}

func (in *instance) close() { in.mod.Close(context.Background()) }

func (in *instance) init(tb testing.TB) {
	tb.Helper()
	r, err := in.initFn.Call(context.Background())
	if err != nil || int32(r[0]) != 0 {
		tb.Fatalf("ptcx_py_init: %v %v; stderr: %s", r, err, in.stderr.String())
	}
}

func (in *instance) malloc(tb testing.TB, n int) uint32 {
	tb.Helper()
	r, err := in.alloc.Call(context.Background(), uint64(n))
	if err != nil || r[0] == 0 {
		tb.Fatalf("ptcx_py_malloc(%d): %v %v", n, r, err)
	}
	return uint32(r[0])
}

// runCap runs code through ptcx_py_run with an output buffer of outCap
// bytes and returns the JSON it wrote there (at most outCap bytes) and the
// length it returned.
func (in *instance) runCap(tb testing.TB, code []byte, outCap int) (string, int32, error) {
	tb.Helper()
	ctx := context.Background()
	src := in.malloc(tb, len(code)+1)
	defer in.free.Call(ctx, uint64(src))
	out := in.malloc(tb, outCap+1)
	defer in.free.Call(ctx, uint64(out))
	if !in.mod.Memory().Write(src, code) {
		tb.Fatal("write code")
	}
	r, err := in.run.Call(in.ctx, uint64(src), uint64(len(code)), uint64(out), uint64(outCap))
	if err != nil {
		return "", 0, err
	}
	n := int32(r[0])
	got := min(int(n), outCap)
	if got < 0 {
		got = 0
	}
	b, _ := in.mod.Memory().Read(out, uint32(got))
	return string(b), n, nil
}

// runJSON runs code and returns its whole JSON outcome, fetching it again
// through ptcx_py_result when it is longer than the buffer.
func (in *instance) runJSON(tb testing.TB, code string) string {
	tb.Helper()
	s, n, err := in.runCap(tb, []byte(code), outputCap)
	if err != nil {
		tb.Fatalf("ptcx_py_run(%.60q) trapped: %v; stderr: %s", code, err, in.stderr.String())
	}
	if n < 0 {
		tb.Fatalf("ptcx_py_run: %d; stderr: %s", n, in.stderr.String())
	}
	if int(n) > outputCap {
		return in.resultJSON(tb, int(n))
	}
	return s
}

func (in *instance) resultJSON(tb testing.TB, outCap int) string {
	tb.Helper()
	ctx := context.Background()
	out := in.malloc(tb, outCap+1)
	defer in.free.Call(ctx, uint64(out))
	r, err := in.result.Call(ctx, uint64(out), uint64(outCap))
	if err != nil {
		tb.Fatalf("ptcx_py_result: %v", err)
	}
	b, _ := in.mod.Memory().Read(out, uint32(min(int(int32(r[0])), outCap)))
	return string(b)
}

// outcome is ptcx_py_run's JSON.
type outcome struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value"`
	Repr  *string         `json:"repr"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Line    *int   `json:"line"`
	} `json:"error"`
}

func (in *instance) runOutcome(tb testing.TB, code string) outcome {
	tb.Helper()
	s := in.runJSON(tb, code)
	var o outcome
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		tb.Fatalf("ptcx_py_run(%.60q) gave invalid JSON %q: %v", code, s, err)
	}
	return o
}

func newTestInstance(t *testing.T) *instance {
	t.Helper()
	rt, compiled := compiledGuest(t)
	in := newInstance(t, rt, compiled)
	t.Cleanup(in.close)
	in.init(t)
	return in
}

func wantValue(t *testing.T, o outcome, want string) {
	t.Helper()
	if !o.OK || string(o.Value) != want {
		t.Fatalf("got %+v (value %s), want the value %s", o, o.Value, want)
	}
}

func wantError(t *testing.T, o outcome, typ string) {
	t.Helper()
	if o.OK || o.Error == nil || o.Error.Type != typ {
		t.Fatalf("got %+v (error %+v), want a %s", o, o.Error, typ)
	}
}

func TestRun_onePlusOne(t *testing.T) {
	in := newTestInstance(t)
	if s := in.runJSON(t, "1 + 1"); s != `{"ok": true, "value": 2}` {
		t.Fatalf("1 + 1 gave %s", s)
	}
	// Initialisation finds everything it needs in the zip: no warnings.
	if in.stderr.Len() != 0 {
		t.Fatalf("stderr: %s", in.stderr.String())
	}
}

func TestRun_jsonAndRe(t *testing.T) {
	in := newTestInstance(t)
	o := in.runOutcome(t, `
import json, re
data = json.loads('{"items": ["a1", "b22", "c333", "d"]}')
nums = [int(m.group(1)) for s in data["items"] if (m := re.search(r"(\d+)$", s))]
{"sum": sum(nums), "nums": nums, "text": json.dumps({"b": 1, "a": [True, None]}, sort_keys=True)}
`)
	wantValue(t, o, `{"sum": 356, "nums": [1, 22, 333], "text": "{\"a\": [true, null], \"b\": 1}"}`)
}

// Deep recursion of every kind is a RecursionError, never a trap, and the
// instance runs the next program normally.
func TestRun_deepRecursion(t *testing.T) {
	in := newTestInstance(t)
	for _, c := range []struct{ name, code string }{
		{"python", "def f(n):\n    return f(n + 1)\nf(0)"},
		{"repr of a deep list", "x = []\nfor _ in range(100000):\n    x = [x]\nrepr(x)"},
		{"json.dumps of a deep list", "import json\nx = []\nfor _ in range(100000):\n    x = [x]\njson.dumps(x)"},
		{"raised limit, python", "import sys\nsys.setrecursionlimit(100000)\ndef g(n):\n    return g(n + 1)\ng(0)"},
		{"raised limit, repr", "import sys\nsys.setrecursionlimit(1000000)\nx = []\nfor _ in range(200000):\n    x = [x]\nrepr(x)"},
		{"deep value returned", "x = []\nfor _ in range(100000):\n    x = [x]\nx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := in.runOutcome(t, c.code)
			if c.name == "deep value returned" {
				// json.dumps and repr both hit the limit: the glue says so.
				if !o.OK || o.Repr == nil || !strings.Contains(*o.Repr, "RecursionError") {
					t.Fatalf("got %+v", o)
				}
			} else {
				wantError(t, o, "RecursionError")
			}
			wantValue(t, in.runOutcome(t, "1 + 1"), "2")
		})
	}
}

func TestRun_outcomes(t *testing.T) {
	in := newTestInstance(t)
	for _, c := range []struct {
		name, code string
		value      string // the JSON value, or
		repr       string // the repr, or
		errType    string // the exception's type
		line       int
	}{
		{name: "no final expression", code: "x = 1", value: "null"},
		{name: "empty", code: "", value: "null"},
		{name: "None", code: "None", value: "null"},
		{name: "string", code: "'h\u00e9' * 2", value: `"héhé"`},
		{name: "not JSON: set", code: "{1, 2}", repr: "{1, 2}"},
		{name: "not JSON: nan", code: "float('nan')", repr: "nan"},
		{name: "raise", code: "x = 1\nraise ValueError('bad')", errType: "ValueError", line: 2},
		{name: "syntax", code: "1 +", errType: "SyntaxError", line: 1},
		{name: "SystemExit", code: "import sys\nsys.exit(3)", errType: "SystemExit", line: 2},
		{name: "unprintable", code: "class E(Exception):\n    def __str__(self): raise TypeError\nraise E()", errType: "E", line: 3},
		{name: "import missing", code: "import _ssl", errType: "ModuleNotFoundError", line: 1},
		{name: "import left out", code: "import tkinter", errType: "ModuleNotFoundError", line: 1},
		{name: "subprocess", code: "import subprocess\nsubprocess.run(['ls'])", errType: "OSError"},
		{name: "write the zip", code: "open('/usr/local/lib/python313.zip', 'wb')", errType: "OSError"},
		// No preopen holds /etc: WASI says ENOTCAPABLE.
		{name: "read outside the zip", code: "open('/etc/passwd').read()", errType: "PermissionError", line: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := in.runOutcome(t, c.code)
			switch {
			case c.errType != "":
				if c.errType == "OSError" && o.Error != nil && o.Error.Type == "PermissionError" {
					break // the OSError subclass of EACCES and EPERM
				}
				wantError(t, o, c.errType)
				if c.line != 0 && (o.Error.Line == nil || *o.Error.Line != c.line) {
					t.Fatalf("line: got %+v, want %d", o.Error, c.line)
				}
			case c.repr != "":
				if !o.OK || o.Repr == nil || *o.Repr != c.repr {
					t.Fatalf("got %+v, want the repr %q", o, c.repr)
				}
			default:
				wantValue(t, o, c.value)
			}
		})
	}
}

func TestRun_invalidUTF8(t *testing.T) {
	in := newTestInstance(t)
	s, n, err := in.runCap(t, []byte("x = '\xff'"), outputCap)
	if err != nil || n <= 0 || !strings.Contains(s, `"UnicodeDecodeError"`) {
		t.Fatalf("got %q %d %v", s, n, err)
	}
}

func TestRun_globalsAndStdout(t *testing.T) {
	in := newTestInstance(t)
	wantValue(t, in.runOutcome(t, "x = 41\nprint('hello', x)"), "null")
	wantValue(t, in.runOutcome(t, "x + 1"), "42")
	if got := in.stdout.String(); got != "hello 41\n" {
		t.Fatalf("stdout %q", got)
	}
}

// A JSON outcome longer than the buffer is cut at the buffer's size, its
// whole length returned, and ptcx_py_result copies it whole.
func TestRun_smallBuffer(t *testing.T) {
	in := newTestInstance(t)
	code := []byte("'x' * 100")
	want := `{"ok": true, "value": "` + strings.Repeat("x", 100) + `"}`
	for _, outCap := range []int{0, 1, len(want) - 1, len(want), len(want) + 1} {
		s, n, err := in.runCap(t, code, outCap)
		if err != nil || int(n) != len(want) || s != want[:min(outCap, len(want))] {
			t.Fatalf("cap %d: got %q %d %v", outCap, s, n, err)
		}
		if got := in.resultJSON(t, len(want)); got != want {
			t.Fatalf("cap %d: ptcx_py_result gave %q", outCap, got)
		}
	}
}

func TestMkzip_storedPyc(t *testing.T) {
	requireBuilt(t)
	b, err := os.ReadFile(filepath.Clean(zipFile))
	if err != nil {
		t.Fatal(err)
	}
	// A stored zip's local headers say method 0; a deflated one says 8.
	if i := bytes.Index(b, []byte("PK\x03\x04")); i < 0 || b[i+8] != 0 || b[i+9] != 0 {
		t.Fatalf("the stdlib zip is not stored")
	}
}

// Benchmarks: compile (cold and from wazero's compilation cache),
// instantiate + init, and a run of 1 + 1 on a live instance.

func BenchmarkCompile(b *testing.B) {
	wasm := requireBuilt(b)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
			if _, err := rt.CompileModule(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			rt.Close(ctx)
		}
	})
	b.Run("cached", func(b *testing.B) {
		cache, err := wazero.NewCompilationCacheWithDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		compile := func() {
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
			if _, err := rt.CompileModule(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			rt.Close(ctx)
		}
		compile() // fills the cache
		for b.Loop() {
			compile()
		}
	})
}

// BenchmarkInstantiate is instantiate alone (memory, data segments,
// _initialize): BenchmarkInstantiateInit less this is ptcx_py_init.
func BenchmarkInstantiate(b *testing.B) {
	rt, compiled := compiledGuest(b)
	for b.Loop() {
		newInstance(b, rt, compiled).close()
	}
}

// BenchmarkFreshOnePlusOne is 1 + 1 on a fresh instance, as a program
// would run without an image: instantiate, init, run.
func BenchmarkFreshOnePlusOne(b *testing.B) {
	rt, compiled := compiledGuest(b)
	for b.Loop() {
		in := newInstance(b, rt, compiled)
		in.init(b)
		in.runJSON(b, "1 + 1")
		in.close()
	}
}

func BenchmarkInstantiateInit(b *testing.B) {
	rt, compiled := compiledGuest(b)
	for b.Loop() {
		in := newInstance(b, rt, compiled)
		in.init(b)
		in.close()
	}
}

func BenchmarkRunOnePlusOne(b *testing.B) {
	rt, compiled := compiledGuest(b)
	in := newInstance(b, rt, compiled)
	defer in.close()
	in.init(b)
	for b.Loop() {
		in.runJSON(b, "1 + 1")
	}
}

// FuzzRun feeds arbitrary bytes to ptcx_py_run: the outcome is always one
// JSON object saying ok or naming an exception, and never a trap. An input
// that runs longer than a few seconds (a loop the fuzzer wrote) is cut and
// not judged. Each input gets a fresh instance.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		"1 + 1", "x = [", "\xff\xfe", "raise SystemExit", "def f(): return f()\nf()",
		"import json; json.loads('[' * 100000)", "'\\N{", "(" + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 301),
		"import sys; sys.setrecursionlimit(10**6); eval('-' * 100000 + '1')", "\x00",
	} {
		f.Add([]byte(s))
	}
	rt, compiled := compiledGuest(f)
	f.Fuzz(func(t *testing.T, code []byte) {
		in := newInstance(t, rt, compiled)
		defer in.close()
		in.init(t)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		in.ctx = ctx
		s, n, err := in.runCap(t, code, 1<<20)
		if ctx.Err() != nil {
			t.Skip("ran past the deadline")
		}
		if err != nil || n < 0 {
			t.Fatalf("ptcx_py_run(%q): %d %v; stderr: %s", code, n, err, in.stderr.String())
		}
		var o outcome
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			t.Fatalf("ptcx_py_run(%q) gave invalid JSON %q: %v", code, s, err)
		}
		if !o.OK && (o.Error == nil || o.Error.Type == "") {
			t.Fatalf("ptcx_py_run(%q) failed without an exception: %s", code, s)
		}
	})
}
