package wasmhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// recordingTools answers every call inside Dispatch and records it: echo
// returns its arguments, add sums a and b, fail fails with the code
// TOOL_FAILED and the message "no such thing", slow answers after 20 ms
// from another goroutine.
type recordingTools struct {
	mu    sync.Mutex
	calls []string
}

func (t *recordingTools) Dispatch(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
	t.mu.Lock()
	t.calls = append(t.calls, name+" "+string(args))
	t.mu.Unlock()
	switch name {
	case "echo":
		done(wasmhost.CallResult{OK: true, Value: args})
	case "add":
		var in struct{ A, B float64 }
		_ = json.Unmarshal(args, &in)
		done(wasmhost.CallResult{OK: true, Value: json.RawMessage(fmt.Sprint(in.A + in.B))})
	case "slow":
		time.AfterFunc(20*time.Millisecond, func() { done(wasmhost.CallResult{OK: true, Value: args}) })
	default:
		done(wasmhost.CallResult{Message: "no such thing", Code: api.CodeToolFailed})
	}
}

func (t *recordingTools) log() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.calls...)
}

var suspendTools = []string{"echo", "add", "fail", "slow"}

// equivalencePrograms are run straight and suspended at every await.
var equivalencePrograms = []struct{ name, js string }{
	{"one call", `return await tools.echo({x: 1});`},
	{"sequential calls and logs", `
		let s = 0;
		for (let i = 0; i < 5; i++) { console.log("step", i); s = await tools.add({a: s, b: i}); }
		return s;`},
	{"Promise.all", `
		const r = await Promise.all([tools.echo({n: 1}), tools.add({a: 2, b: 3}), tools.echo({n: 3})]);
		return r;`},
	{"timers", `
		const order = [];
		await new Promise(res => setTimeout(() => { order.push("a"); res(); }, 15));
		const t = setTimeout(() => order.push("cleared"), 5);
		clearTimeout(t);
		await Promise.all([
			new Promise(res => setTimeout(() => { order.push("c"); res(); }, 30)),
			new Promise(res => setTimeout(() => { order.push("b"); res(); }, 10)),
		]);
		return order;`},
	{"caught tool failure", `
		try { await tools.fail({}); } catch (e) { console.warn(e.name, e.message, e.code); }
		return "after";`},
	{"uncaught exception after calls", `
		await tools.echo({});
		throw new TypeError("broken " + (await tools.add({a: 1, b: 1})));`},
	{"closures", `
		function counter() { let n = 0; return async () => { n = await tools.add({a: n, b: 1}); return n; }; }
		const c = counter();
		await c(); await c();
		return await c();`},
	{"Map and Set state", `
		const m = new Map(), s = new Set();
		for (let i = 0; i < 4; i++) { m.set("k" + i, await tools.echo({i})); s.add(i % 2); }
		return {m: [...m.entries()], s: [...s], big: "x".repeat(3000).length};`},
	{"a slow call beside a timer", `
		const r = await Promise.race([tools.slow({v: 1}), new Promise(res => setTimeout(() => res("timer"), 2000))]);
		return r;`},
	{"deterministic clock and random", `
		const a = [Math.random(), Date.now(), performance.now() > 0];
		await tools.echo({});
		a.push(Math.random(), Date.now());
		await new Promise(res => setTimeout(res, 1));
		a.push(Math.random(), new Date().toISOString());
		return a;`},
	{"an answer and a held call at one suspension", `
		const order = [];
		const p = tools.echo({n: 1}), q = tools.echo({n: 2});
		await p;
		const r = tools.echo({n: 3}).then(() => order.push(3));
		await q.then(() => order.push(2));
		await r;
		return order;`},
	{"a throwing timer callback", `
		setTimeout(() => { throw new Error("from a timer"); }, 5);
		await new Promise(r => setTimeout(r, 50));
		return "unreached";`},
	{"a refused call", `
		try { await tools.echo({big: "y".repeat(5000)}); } catch (e) { console.log(e.code); }
		return await tools.echo({ok: true});`},
}

type runRecord struct {
	result json.RawMessage
	logs   []string
	calls  []string
	kind   api.Kind
	msg    string
	stack  string
}

func record(out wasmhost.Outcome, err error, tools *recordingTools) runRecord {
	rec := runRecord{result: out.Result, logs: out.Logs, calls: tools.log()}
	if re, ok := err.(*wasmhost.RunError); ok {
		rec.kind, rec.msg, rec.stack, rec.logs = re.Kind, re.Message, re.Stack, re.Logs
	}
	return rec
}

func TestRuntime_Resume_everyAwaitIsEquivalent(t *testing.T) {
	rt := newRuntime(t, testConfig())
	ctx := context.Background()
	world := &wasmhost.World{Seed: 7}
	limits := api.Limits{MaxCallArgBytes: 4096}
	for _, tc := range equivalencePrograms {
		t.Run(tc.name, func(t *testing.T) {
			straightTools := &recordingTools{}
			out, err := rt.Run(ctx, wasmhost.Program{JS: tc.js, Tools: suspendTools, World: world, Limits: limits}, straightTools)
			straight := record(out, err, straightTools)

			tools := &recordingTools{}
			always := func(wasmhost.Quiescence) bool { return true }
			out, err = rt.Run(ctx, wasmhost.Program{JS: tc.js, Tools: suspendTools, World: world, Limits: limits, Suspend: always}, tools)
			suspensions := 0
			for err == nil && out.Suspended != nil {
				suspensions++
				require.Less(t, suspensions, 100)
				out, err = rt.Resume(ctx, out.Suspended.Snapshot, tools, wasmhost.Resumption{Suspend: always})
			}
			require.Positive(t, suspensions)
			t.Logf("%d suspensions; result %s, logs %q, calls %d, failure %s %s", suspensions, straight.result, straight.logs, len(straight.calls), straight.kind, straight.msg)
			require.Equal(t, straight, record(out, err, tools))
		})
	}
}
