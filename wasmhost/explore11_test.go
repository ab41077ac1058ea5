package wasmhost_test

import (
	"fmt"
	"testing"
	"github.com/ptcx/ptcx/wasmhost"
)

func TestExploreCall2(t *testing.T) {
	rt := newRuntime(t, testConfig().WithLimits(wasmhost.Limits{MaxCalls: 100000, MaxPendingCalls: 100000}))
	for _, js := range []string{
		`let t0 = performance.now(); for (let i = 0; i < 5000; i++) await tools.echo(); return (performance.now() - t0) / 5000 * 1000`,
		`let t0 = performance.now(); for (let i = 0; i < 5000; i++) await tools.echo({i}); return (performance.now() - t0) / 5000 * 1000`,
		`let t0 = performance.now(); for (let i = 0; i < 5000; i++) await tools.echo({i, s: "abc", a: [1, 2, 3], o: {x: true}}); return (performance.now() - t0) / 5000 * 1000`,
		`let t0 = performance.now(); for (let i = 0; i < 5000; i++) await {i}; return (performance.now() - t0) / 5000 * 1000`,
		`let t0 = performance.now(); for (let i = 0; i < 5000; i++) await new Promise((r) => r({i})); return (performance.now() - t0) / 5000 * 1000`,
	} {
		out, re, _ := runJS(t, rt, js, wasmhost.Limits{})
		fmt.Println(string(out.Result), re, out.Stats.Compute)
	}
}
