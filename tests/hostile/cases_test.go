//go:build linux

package hostile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ptcx/ptcx/api"
)

// hostileCase is one attack: what it does, and what must come of it.
type hostileCase struct {
	name   string
	family string // the family of issue #9 ("1" … "10"), or "sandbox" for those already contained
	// want lists the acceptable outcomes (see outcome): "OK", a code
	// ("TOOL_FAILED"), a code and kind ("CODE_RUN_FAILED/syntax"), a code
	// with any kind ("CODE_RUN_FAILED/*"), or "FAILED" (any failure but
	// INTERNAL).
	want []string
	// run attacks; it returns the result and what a check in the child
	// found wrong ("" when nothing).
	run func(ctx context.Context, e *env) (api.Result, string)
	// maxRSSMB bounds the child's peak RSS (default defaultMaxRSSMB).
	maxRSSMB int
	// maxSeconds bounds the CPU time run took in the child (default 20 s,
	// far above any case's normal cost; times raceCPU under -race). Wall
	// time is bounded only against hangs (maxWallSeconds).
	maxSeconds float64
	// watchCPU measures the CPU the child uses in the 2 s after run
	// returned, which must stay under half a second: a tool body that goes on
	// after its run ended shows there.
	watchCPU bool
}

// defaultMaxRSSMB is the peak RSS a case may reach by default: the sandbox's
// 256 MiB of guest memory and the host's own, with room.
const defaultMaxRSSMB = 500

// prog is a case that runs code with the caller limits given.
func prog(code string, limits map[string]any) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) { return e.run(ctx, code, limits), "" }
}

// progResult is prog that, when the run succeeds, also requires its result
// to be the JSON want.
func progResult(code string, limits map[string]any, want string) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		r := e.run(ctx, code, limits)
		if r.OK() && !jsonEqual(result(r), want) {
			return r, fmt.Sprintf("the result is %s, want %s", result(r), want)
		}
		return r, ""
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// fast are caller limits that end a spinning program quickly.
var fast = map[string]any{"timeout_ms": 300}

// cases is the corpus, in the order of issue #9.
var cases = []hostileCase{
	// 1. The TypeScript stripper's recursion.
	{name: "nested brackets, 200k", family: "1", want: []string{"CODE_RUN_FAILED/syntax", "INVALID_ARGS"},
		run: prog("return "+strings.Repeat("(", 200_000)+"1"+strings.Repeat(")", 200_000), nil)},
	{name: "prefix operators, 200k", family: "1", want: []string{"CODE_RUN_FAILED/syntax", "INVALID_ARGS"},
		run: prog("return "+strings.Repeat("!", 200_000)+"1", nil)},
	{name: "unclosed arrays, 200k", family: "1", want: []string{"CODE_RUN_FAILED/syntax", "INVALID_ARGS"},
		run: prog("return "+strings.Repeat("[", 200_000), nil)},
	{name: "1,000 redeclarations after a 400 KB string", family: "1", want: []string{"INVALID_ARGS"}, maxSeconds: 2,
		run: prog("const a = 0;\nconst s = \""+strings.Repeat("x", 400_000)+"\";\n"+strings.Repeat("const a = 1;\n", 1000), nil)},
	{name: "8,000 assignments to a constant after a 400 KB string", family: "1", want: []string{"CODE_RUN_FAILED/exception"}, maxSeconds: 2,
		run: prog("const a = 0;\nconst s = \""+strings.Repeat("x", 400_000)+"\";\n"+strings.Repeat("a = 1;\n", 8000), nil)},
	{name: "nested brackets, 100k", family: "1", want: []string{"CODE_RUN_FAILED/syntax", "INVALID_ARGS"}, maxRSSMB: 400,
		run: prog("return "+strings.Repeat("(", 100_000)+"1"+strings.Repeat(")", 100_000), nil)},
	{name: "nested brackets, 200 (below any bound)", family: "1", want: []string{"OK"},
		run: progResult("return "+strings.Repeat("(", 200)+"1"+strings.Repeat(")", 200), nil, "1")},

	// 2. edit with replace_all and a result of ~99 GB.
	{name: "edit replace_all, 1 MB x 100 KB", family: "2", want: []string{"TOOL_FAILED"}, run: bigReplace(1<<20, 100_000)},
	{name: "edit replace_all, 16 B x 1 KB (below any bound)", family: "2", want: []string{"OK"}, run: bigReplace(16, 1000)},
	{name: "edit replace_all from a program", family: "2", want: []string{"OK"},
		run: progResult(`
			await tools.write({path: "big.txt", content: "a".repeat(1 << 20)});
			try {
				await tools.edit({path: "big.txt", old_string: "a", new_string: "b".repeat(100000), replace_all: true});
				return "edited";
			} catch (e) { return e instanceof ToolCallError ? "refused" : String(e) }`, nil, `"refused"`)},

	// 3. Host memory spent for a program.
	{name: "8 pending calls with 16 MiB arguments", family: "3", want: []string{"FAILED"}, maxRSSMB: 200,
		run: prog(`const s = "x".repeat(16 << 20);
			await Promise.all(Array.from({length: 8}, () => tools.sink({s})));`, nil)},
	{name: "grep with a 2 MB pattern", family: "3", want: []string{"FAILED"}, maxRSSMB: 300,
		run: prog(`await tools.grep({pattern: "a".repeat(2 << 20)})`, nil)},
	{name: "1 MiB result nested 99 deep", family: "3", want: []string{"OK"}, maxRSSMB: 400,
		run: prog(`let v: any = new Array(400000).fill(0); for (let i = 0; i < 98; i++) v = [v]; return v`, nil)},
	{name: "2 MiB program", family: "3", want: []string{"FAILED"}, maxRSSMB: 400, maxSeconds: 3,
		run: prog("const a = ["+strings.Repeat("1,", 1<<20)+"]; return a.length", map[string]any{"timeout_ms": 2000})},

	// 4. Tool bodies that go on after their run.
	{name: "read of a 256 MB line after the run", family: "4", want: []string{"FAILED"}, watchCPU: true,
		run: hugeLine(`await tools.read({path: "line.txt", start_line: 2, end_line: 2})`)},
	{name: "grep of a 256 MB line after the run", family: "4", want: []string{"FAILED", "OK"}, watchCPU: true,
		run: hugeLine(`await tools.grep({pattern: "[a-z]{60}0", path: "line.txt"})`)},
	{name: "a path 8000 directories deep", family: "4", want: []string{"FAILED"}, watchCPU: true, run: deepPath(8000)},

	// 5. Processes that outlive their tool.
	{name: "command tool, setsid grandchild", family: "5", want: []string{"OK"}, run: escape("escape_setsid")},
	{name: "command tool, double fork", family: "5", want: []string{"OK"}, run: escape("escape_double_fork")},
	{name: "bash, setsid", family: "5", want: []string{"OK"},
		run: escapeBash(`setsid sh -c 'echo $$ >> ../escaped.pid; exec sleep 60' & sleep 0.2`)},
	{name: "bash, double fork", family: "5", want: []string{"OK"},
		run: escapeBash(`( sh -c 'echo $$ >> ../escaped.pid; exec sleep 60' </dev/null >/dev/null 2>&1 & ); sleep 0.2`)},

	// 6. Hard links out of the workspace.
	{name: "read through a hard link", family: "6", want: []string{"FAILED"}, run: hardLink("read", map[string]any{"path": "link.txt"})},
	{name: "grep through a hard link", family: "6", want: []string{"FAILED", "OK"}, run: hardLink("grep", map[string]any{"pattern": "TOPSECRET"})},
	{name: "edit through a hard link", family: "6", want: []string{"FAILED"},
		run: hardLink("edit", map[string]any{"path": "link.txt", "old_string": "TOPSECRET", "new_string": "overwritten"})},

	// 7. The prelude's functions, through the stack-trace API.
	{name: "prelude functions through CallSite.getFunction", family: "7", want: []string{"OK"},
		run: progResult(introspection, nil, `{"obtained": 0, "names": []}`)},

	// 8. Compute time charged for the neighbours' work.
	{name: "16 concurrent programs of 0.3 s CPU, 2 s limit", family: "8", want: []string{"OK"}, maxRSSMB: 1200, run: contention},

	// 9. Admission.
	{name: "16 concurrent memory-heavy programs", family: "9", want: []string{"OK"}, maxRSSMB: 1200, run: memoryHeavy},

	// 10. The smaller ones.
	{name: "limits.memory_mb of 1", family: "10", want: []string{"INVALID_ARGS", "OK"},
		run: prog(`return 1`, map[string]any{"memory_mb": 1})},
	{name: "duplicate keys in arguments", family: "10", want: []string{"INVALID_ARGS"},
		run: func(ctx context.Context, e *env) (api.Result, string) {
			if err := e.file("a.txt", []byte("harmless\n")); err != nil {
				return api.Result{}, err.Error()
			}
			return e.call(ctx, "read", []byte(`{"path": "a.txt", "path": "../outside/secret.txt"}`)), ""
		}},
	{name: "duplicate code keys in run_code", family: "10", want: []string{"INVALID_ARGS"},
		run: func(ctx context.Context, e *env) (api.Result, string) {
			return e.call(ctx, "run_code", []byte(`{"description": "d", "code": "return 1", "code": "return 2"}`)), ""
		}},
	{name: "a file name with a newline", family: "10", want: []string{"OK"}, run: newlineName},
	{name: "command tools see the ptcx environment", family: "10", want: []string{"OK"},
		run: func(ctx context.Context, e *env) (api.Result, string) {
			r := e.call(ctx, "env_probe", map[string]any{})
			if r.OK() && string(r.Value) != `"clean"` {
				return r, "the command tool saw PTCX_HOSTILE_SECRET: " + string(r.Value)
			}
			return r, ""
		}},
	{name: "a run that finishes while cancelled", family: "10", want: []string{"OK"}, run: finishCancelled},

	// Already contained by the sandbox: these pass on every branch.
	{name: "infinite loop", family: "sandbox", want: []string{"CODE_RUN_FAILED/timeout"}, run: prog(`while (true) {}`, fast)},
	{name: "repeat 1<<27 inside a native", family: "sandbox", want: []string{"CODE_RUN_FAILED/timeout", "CODE_RUN_FAILED/memory"},
		run: prog(`return "x".repeat(1 << 27).length`, map[string]any{"timeout_ms": 100})},
	{name: "String(7n ** 300000n)", family: "sandbox", want: []string{"CODE_RUN_FAILED/timeout"},
		run: prog(`return String(7n ** 300000n).length`, map[string]any{"timeout_ms": 100})},
	{name: "regex backtracking", family: "sandbox", want: []string{"CODE_RUN_FAILED/timeout"},
		run: prog(`return /^(a|aa)+$/.test("a".repeat(40) + "b")`, fast)},
	{name: "memory bomb, buffers", family: "sandbox", want: []string{"CODE_RUN_FAILED/memory"},
		run: prog(`const a: ArrayBuffer[] = []; while (true) a.push(new ArrayBuffer(1 << 20));`, nil)},
	{name: "memory bomb, string doubling", family: "sandbox", want: []string{"CODE_RUN_FAILED/memory", "CODE_RUN_FAILED/exception"},
		run: prog(`let s = "x"; while (true) s += s;`, nil)},
	{name: "memory bomb, caught and retried", family: "sandbox", want: []string{"CODE_RUN_FAILED/memory", "CODE_RUN_FAILED/timeout"},
		run: prog(`for (;;) { try { const a = []; for (;;) a.push(new Uint8Array(1 << 20)) } catch {} }`, map[string]any{"timeout_ms": 2000})},
	{name: "microtask flood", family: "sandbox", want: []string{"CODE_RUN_FAILED/timeout", "CODE_RUN_FAILED/memory"},
		run: prog(`function f() { queueMicrotask(f); queueMicrotask(f) } f(); await new Promise(() => {})`, fast)},
	{name: "await loop", family: "sandbox", want: []string{"CODE_RUN_FAILED/timeout"}, run: prog(`for (;;) await null`, fast)},
	{name: "timer flood", family: "sandbox", want: []string{"CODE_RUN_FAILED/*"},
		run: prog(`for (;;) setTimeout(() => {}, 0)`, fast)},
	{name: "deep recursion", family: "sandbox", want: []string{"CODE_RUN_FAILED/exception"},
		run: prog(`function f(n: number): number { return f(n + 1) + 1 } return f(0)`, nil)},
	{name: "call flood", family: "sandbox", want: []string{"CODE_RUN_FAILED/exception"},
		run: prog(`for (;;) await tools.glob({pattern: "*"})`, map[string]any{"max_calls": 100})},
	{name: "output flood", family: "sandbox", want: []string{"CODE_RUN_FAILED/output-limit"},
		run: prog(`for (;;) console.log("spam ".repeat(1000))`, nil)},
	{name: "tools.run_code from a program", family: "sandbox", want: []string{"OK"},
		run: progResult(`
			const t: any = tools;
			let call = "not called";
			try { await t.run_code({code: "return 1", description: "d"}); call = "called" } catch {}
			let bracket = "not called";
			try { await t["run_code"]({code: "return 1", description: "d"}); bracket = "called" } catch {}
			return {call, bracket}`, nil, `{"call": "not called", "bracket": "not called"}`)},
	{name: "forged nested calls", family: "sandbox", want: []string{"OK"}, run: progResult(forgery, nil, `{"found": [], "proto": "refused", "unbound": "refused"}`)},
}

// bigReplace writes a file of size letters and replaces each with n bytes:
// a result of size*n bytes.
func bigReplace(size, n int) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		if r := e.call(ctx, "write", map[string]any{"path": "big.txt", "content": strings.Repeat("a", size)}); !r.OK() {
			return r, "the write before the edit failed: " + r.Text
		}
		return e.call(ctx, "edit", map[string]any{"path": "big.txt", "old_string": "a", "new_string": strings.Repeat("b", n), "replace_all": true}), ""
	}
}

// hugeLine writes a file of one 256 MB line and runs code with a wall
// time of half a second.
func hugeLine(code string) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		f, err := os.Create(filepath.Join(e.ws, "line.txt"))
		if err != nil {
			return api.Result{}, err.Error()
		}
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 256 {
			if _, err := f.Write(chunk); err != nil {
				return api.Result{}, err.Error()
			}
		}
		if err := f.Close(); err != nil {
			return api.Result{}, err.Error()
		}
		return e.run(ctx, code, map[string]any{"wall_ms": 500}), ""
	}
}

// deepPath creates depth nested directories "d" and reads a path through
// all of them, with a wall time of half a second.
func deepPath(depth int) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		fd, err := syscall.Open(e.ws, syscall.O_DIRECTORY|syscall.O_RDONLY, 0)
		if err != nil {
			return api.Result{}, err.Error()
		}
		for range depth {
			if err := syscall.Mkdirat(fd, "d", 0o755); err != nil {
				return api.Result{}, err.Error()
			}
			next, err := syscall.Openat(fd, "d", syscall.O_DIRECTORY|syscall.O_RDONLY, 0)
			syscall.Close(fd)
			if err != nil {
				return api.Result{}, err.Error()
			}
			fd = next
		}
		syscall.Close(fd)
		return e.run(ctx, `await tools.read({path: "d/".repeat(`+strconv.Itoa(depth)+`) + "x"})`, map[string]any{"wall_ms": 500}), ""
	}
}

// escaped reads the PIDs the escape scripts recorded in file, kills each,
// and says which were still alive 2 s after the tool ended.
func escaped(file string, started time.Time) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return "the script recorded no PID: " + err.Error()
	}
	var alive []string
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return "a PID that is not a number: " + f
		}
		for time.Since(started) < 2*time.Second && running(pid) {
			time.Sleep(20 * time.Millisecond)
		}
		if running(pid) {
			alive = append(alive, f)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if len(alive) > 0 {
		return "processes outlived their tool: " + strings.Join(alive, ", ")
	}
	return ""
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

// escape calls a command tool that leaves a grandchild behind.
func escape(tool string) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		r := e.run(ctx, `return await tools.`+tool+`()`, nil)
		return r, escaped(filepath.Join(e.base, "escaped.pid"), time.Now())
	}
}

// escapeBash runs a bash command that leaves a grandchild behind; it runs
// in the workspace, and records PIDs in the directory above.
func escapeBash(command string) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		r := e.run(ctx, `return (await tools.bash({command: `+strconv.Quote(command)+`})).exit_code`, nil)
		return r, escaped(filepath.Join(e.base, "escaped.pid"), time.Now())
	}
}

// hardLink links a secret file outside the workspace into it and calls tool
// directly: nothing of the secret may come back, and it must not change.
func hardLink(tool string, args map[string]any) func(context.Context, *env) (api.Result, string) {
	return func(ctx context.Context, e *env) (api.Result, string) {
		secret := filepath.Join(e.base, "outside", "secret.txt")
		if err := os.WriteFile(secret, []byte("TOPSECRET the-content\n"), 0o644); err != nil {
			return api.Result{}, err.Error()
		}
		if err := os.Link(secret, filepath.Join(e.ws, "link.txt")); err != nil {
			return api.Result{}, err.Error()
		}
		if tool == "edit" { // edit needs a read first; it is the read that must refuse
			e.call(ctx, "read", map[string]any{"path": "link.txt"})
		}
		r := e.call(ctx, tool, args)
		if strings.Contains(r.Text, "the-content") || strings.Contains(string(r.Value), "the-content") {
			return r, "the secret came back: " + r.Text
		}
		if data, _ := os.ReadFile(secret); string(data) != "TOPSECRET the-content\n" {
			return r, "the file outside the workspace was changed: " + string(data)
		}
		return r, ""
	}
}

// introspection tries every route to a function of the prelude or the
// natives: stack frames' getFunction and getThis while the prelude is on
// the stack (a throwing getter, toJSON, a Proxy and a thenable in a tool's
// arguments, console.log of a value whose conversion throws, a result that
// throws while it is checked), and reports what it got that it did not
// define itself.
const introspection = `
const own = new Set<any>();
const got: any[] = [];
const E: any = Error;
E.prepareStackTrace = (err: any, frames: any[]) => {
	for (const f of frames) {
		for (const m of ["getFunction", "getThis"]) {
			try { const v = f[m]?.(); if (typeof v === "function" && !own.has(v)) got.push(v) } catch {}
		}
	}
	return "stack";
};
function mark(o: any) { for (const k of Object.keys(o)) if (typeof o[k] === "function") own.add(o[k]); return o }
const thrower = () => { const e = new Error("probe"); void e.stack; throw e };
own.add(thrower); own.add(E.prepareStackTrace); own.add(mark);
const routes: (() => any)[] = [
	() => tools.glob(mark({get pattern() { return thrower() }})),
	() => tools.glob(mark({pattern: "*", toJSON() { return thrower() }})),
	() => tools.glob(new Proxy({pattern: "*"}, mark({get: () => thrower(), ownKeys: () => thrower()}))),
	() => tools.glob(mark({pattern: "*", then() { thrower() }})),
	() => console.log(mark({toString() { return thrower() }, [Symbol.toPrimitive]() { return thrower() }})),
	() => console.log(new Proxy({}, mark({get: () => thrower(), getPrototypeOf: () => thrower()}))),
	() => { throw mark({get message() { return thrower() }, get name() { return thrower() }}) },
];
for (const r of routes) { own.add(r); try { await r() } catch (e: any) { try { void e.stack } catch {} } }
try { await tools.glob({pattern: "*"}) } catch {}
return {obtained: got.length, names: got.map((f) => f.name || "(anonymous)")};
`

// forgery looks for a way to make a nested call the prelude did not make:
// a hidden global or property holding a native, the tools object's
// prototype, and a tool that is not bound.
const forgery = `
const found: string[] = [];
const std = new Set(["tools", "ToolCallError", "console", "setTimeout", "clearTimeout", "queueMicrotask", "performance"]);
for (const k of Reflect.ownKeys(globalThis)) {
	const v = (globalThis as any)[k];
	if (typeof k === "string" && /natives|ptcx|__/i.test(k)) found.push(k);
	if (std.has(String(k)) && v && typeof v === "object") for (const p of Reflect.ownKeys(v)) if (/natives|__|call$/i.test(String(p)) && String(k) !== "tools") found.push(String(k) + "." + String(p));
}
let proto = "refused";
try { const p: any = Object.getPrototypeOf(tools); if (p && typeof p.call === "function") { p.call("glob", "{}"); proto = "called" } } catch {}
let unbound = "refused";
try { await (tools as any).cancel_me_not(); unbound = "called" } catch {}
return {found, proto, unbound};
`

// contention runs 16 programs that each need about 0.3 s of CPU, at once,
// with a compute limit of 2 s each: on 2 cores, wall time in the guest is
// several times that, so a limit on wall time fails them all.
func contention(ctx context.Context, e *env) (api.Result, string) {
	const n = 16
	results := make([]api.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = e.run(ctx, `let x = 0; for (let i = 0; i < 3e6; i++) x = (x + i) % 1000003; return x > -1`, map[string]any{"timeout_ms": 2000})
		})
	}
	wg.Wait()
	return summarise(results)
}

// memoryHeavy runs 16 programs at once that each touch 120 MiB of guest
// memory and hold it for a while.
func memoryHeavy(ctx context.Context, e *env) (api.Result, string) {
	const n = 16
	results := make([]api.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = e.run(ctx, `const a: Uint8Array[] = []; for (let i = 0; i < 120; i++) a.push(new Uint8Array(1 << 20).fill(1));
				await new Promise((r) => setTimeout(r, 300)); return a.length`, map[string]any{"timeout_ms": 30000})
		})
	}
	wg.Wait()
	// At most four of them (1 GiB committed, 256 MiB each) run at once;
	// the others wait their turn, and all succeed.
	return summarise(results)
}

// summarise is the first failure among results, or the first success with
// a count of them; a failure must be a retryable refusal, not INTERNAL.
func summarise(results []api.Result) (api.Result, string) {
	ok := 0
	for _, r := range results {
		if r.OK() {
			ok++
		}
	}
	for _, r := range results {
		if !r.OK() {
			return r, fmt.Sprintf("%d of %d runs failed; one: %s", len(results)-ok, len(results), firstLine(r.Text))
		}
	}
	return results[0], ""
}

// newlineName lists a directory holding a file whose name has a newline:
// the text the model sees must not show the name's second half as a line
// of its own.
func newlineName(ctx context.Context, e *env) (api.Result, string) {
	if err := e.file("evil\nname.txt", []byte("x")); err != nil {
		return api.Result{}, err.Error()
	}
	r := e.call(ctx, "list", map[string]any{"path": "."})
	for _, line := range strings.Split(r.Text, "\n") {
		if strings.HasPrefix(line, "name.txt") {
			return r, "the name was printed raw: " + strconv.Quote(r.Text)
		}
	}
	return r, ""
}

// finishCancelled cancels 100 short runs at moments spread over their
// length, so that some are cancelled while they finish: each succeeds, is
// cancelled before it starts (ABORTED_BEFORE_DISPATCH), or fails as the
// documented CODE_RUN_FAILED (abort), never ABORTED.
func finishCancelled(ctx context.Context, e *env) (api.Result, string) {
	var last api.Result
	counts := map[string]int{}
	for i := range 100 {
		rctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Duration(i)*50*time.Microsecond, cancel)
		last = e.run(rctx, `await tools.glob({pattern: "*"}); return 1`, nil)
		cancel()
		counts[outcome(last)]++
		if o := outcome(last); o != "OK" && o != "CODE_RUN_FAILED/abort" && o != string(api.CodeAbortedBeforeDispatch) {
			return last, fmt.Sprintf("a run cancelled as it finished ended as %s: %s (outcomes so far %v)", o, firstLine(last.Text), counts)
		}
	}
	return api.Result{Value: json.RawMessage(`{}`)}, ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
