package wasmhost_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestRuntime_Run_timers(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, js, want string
	}{
		{"fire in deadline order", `
const order = [];
await new Promise((done) => {
  setTimeout(() => order.push("c"), 30);
  setTimeout(() => order.push("a"), 0);
  setTimeout(() => order.push("b"), 10);
  setTimeout(() => { order.push("d"); done() }, 40);
});
return order`, `["a","b","c","d"]`},
		{"equal deadlines fire in the order they were set", `
const order = [];
await new Promise((done) => {
  for (let i = 0; i < 5; i++) setTimeout(() => order.push(i), 0);
  setTimeout(done, 5);
});
return order`, `[0,1,2,3,4]`},
		{"arguments are passed", `return await new Promise((r) => setTimeout(r, 1, "value"))`, `"value"`},
		{"clearTimeout cancels", `
const order = [];
const id = setTimeout(() => order.push("cancelled"), 5);
clearTimeout(id);
clearTimeout(12345);
clearTimeout("nonsense");
await new Promise((r) => setTimeout(r, 20));
return order`, `[]`},
		{"ids are distinct numbers", `const a = setTimeout(() => {}, 0), b = setTimeout(() => {}, 0); return [typeof a, a !== b]`, `["number",true]`},
		{"backoff and retry", `
let tries = 0;
async function attempt() { tries++; if (tries < 3) throw new Error("busy"); return "ok" }
for (let delay = 1; ; delay *= 2) {
  try { return [await attempt(), tries] } catch { await new Promise((r) => setTimeout(r, delay)) }
}`, `["ok",3]`},
		{"interleave with nested calls", `
const order = [];
const t = new Promise((r) => setTimeout(() => { order.push("timer"); r() }, 30));
await tools.slow({ms: 1});
order.push("call");
await t;
return order`, `["call","timer"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, _ := runJS(t, rt, tt.js, api.Limits{})
			require.Nil(t, re)
			require.JSONEq(t, tt.want, string(out.Result))
		})
	}
}

func TestRuntime_Run_timerTimeIsNotComputeTime(t *testing.T) {
	// The program waits 300 ms on a timer with a compute limit of 200 ms.
	out, re, _ := runJS(t, sharedRuntime(t), `await new Promise((r) => setTimeout(r, 300)); return "waited"`,
		api.Limits{ComputeTime: 200 * time.Millisecond})
	require.Nil(t, re)
	require.JSONEq(t, `"waited"`, string(out.Result))
	require.GreaterOrEqual(t, out.Stats.Wall, 300*time.Millisecond)
}

func TestRuntime_Run_tooManyTimers(t *testing.T) {
	_, re, _ := runJS(t, sharedRuntime(t), `for (let i = 0; i < 20000; i++) setTimeout(() => {}, 1000)`, api.Limits{})
	require.NotNil(t, re)
	require.Equal(t, api.KindException, re.Kind)
	require.Equal(t, "RangeError: setTimeout: too many pending timers (the limit is 10000)", re.Message)
}

func TestRuntime_Run_setTimeoutNeedsAFunction(t *testing.T) {
	_, re, _ := runJS(t, sharedRuntime(t), `setTimeout("alert(1)", 0)`, api.Limits{})
	require.NotNil(t, re)
	require.Equal(t, "TypeError: setTimeout: the callback must be a function", re.Message)
}
