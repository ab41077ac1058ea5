package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// awaitOrderExecutor runs programs on the real guest with two tools: echo
// (returns its arguments) and fail (always fails).
func awaitOrderExecutor(t *testing.T) *executor.Executor {
	t.Helper()
	reg := ptcRegistry(t, echoTool, registry.Tool{
		Name: "fail", Description: "Fail.", ConcurrencySafe: true,
		Body: func(context.Context, api.Input) (api.Output, error) { return api.Output{}, errors.New("failed") },
	})
	return newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
}

// TestSandbox_await_ordersAsNodeDoes runs programs that interleave awaits (of native
// promises, of other values, of thenables and of promises whose
// constructor was changed), then-callbacks, rejections, nested calls and an
// async generator consumed by for await,
// and checks the order they logged in. The expected logs are Node's
// (v20): each program run there with tools.echo and tools.fail as promises
// settled from a setTimeout (a nested call's result is a host event: it
// comes once the program's microtasks are drained), not the guest's own.
// The guest's awaits reuse one pair of resolving functions per async
// function call (guest/glue/await.patch), reuse kept reaction records and
// job entries and read a plain promise's constructor directly
// (guest/glue/reactions.patch), and a call's result settles without a
// then lookup when none can be found (guest/glue/promise.inc); the order
// must be the spec's.
func TestSandbox_await_ordersAsNodeDoes(t *testing.T) {
	e := awaitOrderExecutor(t)
	tests := []struct {
		name    string
		program string
		want    []string
	}{
		{name: "interleave", want: []string{"a1", "b1", "sync", "a2", "b2", "t1", "a3", "t2", "echo7"}, program: `
			const log = [];
			async function a() { log.push('a1'); await null; log.push('a2'); await null; log.push('a3'); }
			async function b() { log.push('b1'); await Promise.resolve(); log.push('b2'); }
			a(); b();
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2'));
			log.push('sync');
			const e = await tools.echo({i: 7}); log.push('echo' + e.i);
			return log;`},
		{name: "loops", want: []string{"x0", "y0", "t1", "x1", "y1", "t2", "x2", "y2", "t3", "rxy"}, program: `
			const log = [];
			async function loop(tag, n) { for (let i = 0; i < n; i++) { await undefined; log.push(tag + i); } return tag; }
			const x = loop('x', 3), y = loop('y', 3);
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2')).then(() => log.push('t3'));
			log.push('r' + (await x) + (await y));
			return log;`},
		{name: "thenable", want: []string{"then", "t1", "fv", "h", "t2", "g", "t3", "t4", "echo"}, program: `
			const log = [];
			async function f() { const v = await {then(r) { log.push('then'); r('v'); }}; log.push('f' + v); }
			const p = Promise.resolve(); p.constructor = function () {};
			async function g() { await p; log.push('g'); }
			async function h() { await p.then(() => {}); log.push('h'); }
			f(); g(); h();
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2')).then(() => log.push('t3')).then(() => log.push('t4'));
			await tools.echo({}); log.push('echo');
			return log;`},
		{name: "rejections", want: []string{"cx", "t1", "r1", "t2", "tool:ToolCallError", "fin", "rejy"}, program: `
			const log = [];
			async function r() {
			  try { await Promise.reject('x'); } catch (e) { log.push('c' + e); }
			  await 1; log.push('r1');
			  try { await tools.fail({}); } catch (e) { log.push('tool:' + e.name); }
			  try { await null; throw 'y'; } finally { log.push('fin'); }
			}
			const p = r().catch(e => log.push('rej' + e));
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2'));
			await p;
			return log;`},
		{name: "returns", want: []string{"t1", "q", "t2", "p", "t3", "t4"}, program: `
			const log = [];
			async function ret() { return Promise.resolve('p'); }
			async function retAwait() { return await Promise.resolve('q'); }
			ret().then(v => log.push(v)); retAwait().then(v => log.push(v));
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2')).then(() => log.push('t3')).then(() => log.push('t4'));
			await tools.echo({});
			return log;`},
		{name: "calls", want: []string{"e0", "m0", "a0", "n0", "b0", "e1", "m1", "a1", "n1", "b1", "e2", "m2", "a2", "n2", "b2", "e3", "m3", "a3", "n3", "b3", "all30", "s6"}, program: `
			const log = [];
			let s = 0;
			for (let i = 0; i < 4; i++) {
			  const v = await tools.echo({i});
			  log.push('e' + v.i);
			  Promise.resolve().then(() => log.push('m' + i)).then(() => log.push('n' + i));
			  (async () => { await null; log.push('a' + i); await null; log.push('b' + i); })();
			  s += v.i;
			}
			const [x, y] = await Promise.all([tools.echo({i: 10}), tools.echo({i: 20})]);
			log.push('all' + (x.i + y.i), 's' + s);
			return log;`},
		{name: "nested", want: []string{"in1", "t1", "t2", "got1", "in2", "got2", "sum3"}, program: `
			const log = [];
			async function inner(i) { log.push('in' + i); const v = await tools.echo({i}); log.push('got' + v.i); return v.i; }
			async function outer() { const a = await inner(1); const b = await inner(a + 1); return a + b; }
			const o = outer();
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2'));
			log.push('sum' + await o);
			return log;`},
		{name: "generators", want: []string{"g0", "t1", "t2", "v0", "t3", "g1", "t4", "v1", "g2", "v2", "done", "echo1"}, program: `
			const log = [];
			async function* gen() { for (let i = 0; i < 3; i++) { await null; log.push('g' + i); yield i; } }
			async function consume() { for await (const v of gen()) log.push('v' + v); log.push('done'); }
			const c = consume();
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2')).then(() => log.push('t3')).then(() => log.push('t4'));
			await c;
			const e = await tools.echo({i: 1}); log.push('echo' + e.i);
			return log;`},
		// PromiseResolve reads a plain promise's constructor from its
		// prototype without the general lookup (guest/glue/reactions.patch):
		// a getter there must still run, and a replaced one must still
		// make the await wrap the promise.
		{name: "constructors", want: []string{"sametrue", "get", "get", "sametrue", "samefalse", "a", "c", "t1", "t2", "b", "t3", "t4", "echo1:2"}, program: `
			const log = [];
			const P = Promise.prototype, C = Promise;
			let reads = 0;
			const p = Promise.resolve(1);
			log.push('same' + (Promise.resolve(p) === p));
			Object.defineProperty(P, 'constructor', {configurable: true, get() { reads++; log.push('get'); return C; }});
			async function a() { await p; log.push('a'); }
			a();
			log.push('same' + (Promise.resolve(p) === p));
			Object.defineProperty(P, 'constructor', {configurable: true, writable: true, value: function Other() {}});
			async function b() { await p; log.push('b'); }
			b();
			log.push('same' + (Promise.resolve(p) === p));
			Object.defineProperty(P, 'constructor', {configurable: true, writable: true, value: C});
			async function c() { await p; log.push('c'); }
			c();
			Promise.resolve().then(() => log.push('t1')).then(() => log.push('t2')).then(() => log.push('t3')).then(() => log.push('t4'));
			const e = await tools.echo({i: 1}); log.push('echo' + e.i + ':' + reads);
			return log;`},
		// A call's result object settles its promise without reading then
		// when nothing on its prototype chain has one (guest/glue/promise.inc):
		// a getter or a method put on Object.prototype must still be seen.
		{name: "thens", want: []string{`then:{"i":5}`, "v5", "called", "wreplaced", "x7:3"}, program: `
			const log = [];
			let s = 0;
			for (let i = 0; i < 3; i++) s += (await tools.echo({i})).i;
			Object.defineProperty(Object.prototype, 'then', {configurable: true, get() { log.push('then:' + JSON.stringify(this)); return undefined; }});
			const v = await tools.echo({i: 5});
			log.push('v' + v.i);
			delete Object.prototype.then;
			Object.prototype.then = function (r) { delete Object.prototype.then; log.push('called'); r('replaced'); };
			const w = await tools.echo({i: 6});
			log.push('w' + w);
			const x = await tools.echo({i: 7});
			log.push('x' + x.i + ':' + s);
			return log;`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(e, tt.program)
			require.True(t, r.OK(), r.Text)
			var out struct{ Result []string }
			require.NoError(t, json.Unmarshal(r.Value, &out), string(r.Value))
			require.Equal(t, tt.want, out.Result)
		})
	}
}

// TestSandbox_await_neverSettledIsCollected parks many async functions on
// promises that never settle and drops them: each is a cycle (the
// function and the resolving functions of its await refer to each other,
// guest/glue/await.patch) that only the engine's cycle collector frees, so
// the program runs within the default memory limit (256 MiB) only if it
// does: left, the 100,000 buffers of 4,000 bytes alone would take 400 MB.
func TestSandbox_await_neverSettledIsCollected(t *testing.T) {
	e := awaitOrderExecutor(t)
	r := runProgram(e, `
		let n = 0;
		for (let i = 0; i < 100000; i++) {
			(async () => { const big = new ArrayBuffer(4000); await new Promise(() => {}); n += big.byteLength; })();
		}
		await tools.echo({});
		return [String(n)];`)
	require.True(t, r.OK(), r.Text)
	require.JSONEq(t, `{"logs":[],"result":["0"]}`, string(r.Value))
}
