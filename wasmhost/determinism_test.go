package wasmhost_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

const worldJS = `return {random: [Math.random(), Math.random()], now: Date.now(), perf: performance.now() >= 0, date: new Date().toISOString()}`

func TestConfig_WithDeterministic(t *testing.T) {
	a := newRuntime(t, testConfig().WithDeterministic(7))
	b := newRuntime(t, testConfig().WithDeterministic(7))
	other := newRuntime(t, testConfig().WithDeterministic(8))

	first, re, _ := runJS(t, a, worldJS, api.Limits{})
	require.Nil(t, re)
	again, re, _ := runJS(t, a, worldJS, api.Limits{})
	require.Nil(t, re)
	fromB, re, _ := runJS(t, b, worldJS, api.Limits{})
	require.Nil(t, re)
	fromOther, re, _ := runJS(t, other, worldJS, api.Limits{})
	require.Nil(t, re)

	require.JSONEq(t, string(first.Result), string(again.Result), "two runs on one Runtime differ")
	require.JSONEq(t, string(first.Result), string(fromB.Result), "two Runtimes with one seed differ")
	require.NotEqual(t, string(first.Result), string(fromOther.Result), "another seed gives the same world")
	require.Contains(t, string(first.Result), `"date":"2022-01-01T00:00:00`)
}

func TestConfig_defaultWorldIsReal(t *testing.T) {
	rt := sharedRuntime(t)
	first, re, _ := runJS(t, rt, worldJS, api.Limits{})
	require.Nil(t, re)
	second, re, _ := runJS(t, rt, worldJS, api.Limits{})
	require.Nil(t, re)
	require.NotEqual(t, string(first.Result), string(second.Result))
	require.NotContains(t, string(first.Result), `"date":"2022-01-01`)
}

func TestRuntime_Run_freshMemory(t *testing.T) {
	rt := sharedRuntime(t)
	tests := []struct {
		name, set, check string
	}{
		{"global variable", `globalThis.leak = "secret"`, `return typeof leak`},
		{"prototype change", `Array.prototype.leak = 1; Object.prototype.leak = 2`, `return [typeof [].leak, typeof {}.leak]`},
		{"replaced builtin", `JSON.stringify = () => "leak"`, `return JSON.stringify({a: 1})`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, re, _ := runJS(t, rt, tt.set, api.Limits{})
			require.Nil(t, re)
			out, re, _ := runJS(t, rt, tt.check, api.Limits{})
			require.Nil(t, re)
			require.NotContains(t, string(out.Result), "leak")
			require.NotContains(t, string(out.Result), `"number"`)
			require.NotContains(t, string(out.Result), `"string"`)
		})
	}
}
