package executor_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// TestSandbox_results_keptShapeAsJSONParse checks that a call's result is
// what JSON.parse makes of its text, property by property (keys in order,
// values, descriptors, extensibility), while the guest makes an object of
// the keys of the result before it in one step (guest/glue/fast.inc,
// JS_NewKeptShapeObject): each text follows one whose shape it shares, or
// nearly (keys reordered, one fewer or more, twice, nested, a value the
// fast path gives up on), and the program changes results it holds (adds,
// deletes, freezes) before the next one arrives.
func TestSandbox_results_keptShapeAsJSONParse(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.Register(registry.Deployment, registry.Tool{
		Name: "raw", Description: "Return the text of args.text as the result.", ConcurrencySafe: true,
		Body: func(_ context.Context, in api.Input) (api.Output, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(in.Args, &a); err != nil {
				return api.Output{}, err
			}
			return api.Output{Value: json.RawMessage(a.Text)}, nil
		},
	}))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)))
	texts := []string{
		`{"a":1,"b":2}`, `{"a":3,"b":4}`, `{"a":3,"b":4}`, `{"b":1,"a":2}`, `{"b":1,"a":2}`,
		`{"a":1}`, `{"a":1,"b":2}`, `{"a":1,"b":2,"c":3}`, `{"a":1,"b":2}`, `{"a":1,"a":2}`,
		`{"a":1,"b":2}`, `{"a":{"a":1,"b":2},"b":[{"a":1,"b":2},{"b":1,"a":2}]}`, `{"a":1,"b":2}`,
		`{"a":1.5,"b":2}`, `{"a":"x","b":null}`, `{ "a" : 1 , "b" : 2 }`,
		`{"1":1,"b":2}`, `{"1":1,"b":2}`, `{"__proto__":1,"b":2}`, `{"__proto__":1,"b":2}`,
		`{"a\u0062":1}`, `{"ab":1}`, `{"ab":1}`, `{}`, `{}`, `[{"ab":1},{"ab":2}]`,
		`{"a":true,"b":false,"c":"s","d":-7,"e":[],"f":{}}`, `{"a":true,"b":false,"c":"s","d":-7,"e":[],"f":{}}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17}`,
	}
	program := `
		const texts = ` + mustJSON(t, texts) + `;
		const view = v => JSON.stringify(v === null || typeof v !== "object" ? v : {
			proto: Object.getPrototypeOf(v) === (Array.isArray(v) ? Array.prototype : Object.prototype),
			extensible: Object.isExtensible(v),
			props: Object.getOwnPropertyNames(v).map(k => [k, Object.getOwnPropertyDescriptor(v, k).writable,
				Object.getOwnPropertyDescriptor(v, k).enumerable, Object.getOwnPropertyDescriptor(v, k).configurable,
				JSON.parse(view(v[k]))]),
		});
		const out = [];
		const held = [];
		for (let i = 0; i < texts.length; i++) {
			const got = await tools.raw({text: texts[i]});
			const want = JSON.parse(texts[i]);
			if (view(got) !== view(want)) out.push(i + ": " + view(got) + " != " + view(want));
			held.push(got);
			if (i % 3 === 0) { got.z = i; delete got.a; }
			if (i % 3 === 1) Object.freeze(got);
		}
		return [String(held.length), ...out];`
	r := runProgram(e, program)
	require.True(t, r.OK(), r.Text)
	var res struct{ Result []string }
	require.NoError(t, json.Unmarshal(r.Value, &res), string(r.Value))
	require.Equal(t, []string{strconv.Itoa(len(texts))}, res.Result)
}
