package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// TestSandbox_args_encodeAsJSONStringify checks that the text a tool is
// given for its arguments is JSON.stringify's of them, for objects the
// guest encodes on its fast path (guest/glue/encode.c's encode_plain: at
// most 16 properties, ASCII keys that are not indexes, primitive values)
// and for those it leaves to the general path.
func TestSandbox_args_encodeAsJSONStringify(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "see", Description: "Record the arguments.", ConcurrencySafe: true,
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			mu.Lock()
			seen = append(seen, string(in.Args))
			mu.Unlock()
			return api.ValueOutput(true)
		},
	}))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	props := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, "k%d: %d, ", i, i)
		}
		b.WriteString("}")
		return b.String()
	}
	tests := []struct{ name, args string }{
		{"one integer", `{i: 5}`},
		{"empty", `{}`},
		{"primitives", `{a: null, b: true, c: false, d: -7, e: 1.5, f: -0, g: 1e21, h: "s", i: 2147483647, j: -2147483648}`},
		{"undefined omitted", `{a: 1, b: undefined, c: 3}`},
		{"all undefined", `{a: undefined}`},
		{"strings to escape", `{a: "q\"b\\n\n\t\u0001", b: "é", c: "\ud83d\ude00", d: "\ud800"}`},
		{"a concatenated string", `{a: "x".repeat(40) + String(Math.PI)}`},
		{"a deleted property", `(() => { const o = {a: 1, b: 2, c: 3}; delete o.b; return o })()`},
		{"a non-enumerable property", `Object.defineProperty({a: 1}, "b", {value: 2, enumerable: false})`},
		{"a symbol key", `{a: 1, [Symbol("s")]: 2}`},
		{"integer keys first", `{b: 1, 2: 2, 1: 3, a: 4}`},
		{"an index key past int31", `{b: 1, "4294967294": 2, "4294967295": 3, a: 4}`},
		{"a non-ASCII key", `{é: 1, a: 2}`},
		{"a key to escape", `{"q\"k": 1, "n\nk": 2}`},
		{"a getter", `{a: 1, get b() { return 2 }, c: 3}`},
		{"a nested object", `{a: {b: {c: 1}}, d: [1, {e: 2}]}`},
		{"a null prototype", `Object.assign(Object.create(null), {a: 1})`},
		{"a frozen object", `Object.freeze({a: 1, b: "x"})`},
		{"15 properties", props(15)},
		{"16 properties", props(16)},
		{"17 properties", props(17)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			r := runProgram(e, `const a = `+tt.args+`; await tools.see(a); return JSON.stringify(a)`)
			require.True(t, r.OK(), r.Text)
			var out struct{ Result string }
			require.NoError(t, json.Unmarshal(r.Value, &out), string(r.Value))
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []string{out.Result}, seen)
		})
	}
}

// TestSandbox_args_refusedOnEitherPath checks that arguments the guest
// refuses are refused with the same message whether the object would
// otherwise be on its fast path or not.
func TestSandbox_args_refusedOnEitherPath(t *testing.T) {
	e := awaitOrderExecutor(t)
	tests := []struct{ name, args, message string }{
		{"NaN", `{a: 1, b: NaN}`, "args.b is NaN"},
		{"Infinity past 16 properties", `{k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: 9, k10: 10, k11: 11, k12: 12, k13: 13, k14: 14, k15: 15, k16: Infinity}`, "args.k16 is Infinity"},
		{"a BigInt", `{a: 1n}`, "args.a is a BigInt"},
		{"undefined in an array", `{a: [undefined]}`, "args.a[0] is undefined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(e, `await tools.echo(`+tt.args+`)`)
			require.False(t, r.OK())
			require.Contains(t, r.Text, tt.message)
		})
	}
}
