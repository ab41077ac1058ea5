package executor_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSandbox_calls_settleInAnyOrder runs calls one after another and in
// batches of 1 to 40 at once, settled in whatever order the tools finish,
// so that the guest's table of pending calls (guest/glue/calls.c) empties
// slots, leaves tombstones, reuses them and grows: every call must settle
// its own promise with its own result, once.
func TestSandbox_calls_settleInAnyOrder(t *testing.T) {
	e := awaitOrderExecutor(t)
	r := runProgram(e, `
		let got = 0, want = 0, n = 0;
		for (let round = 0; round < 30; round++) {
			const size = (round * 7) % 40 + 1;
			const batch = Array.from({length: size}, (_, k) => tools.echo({i: round * 1000 + k}));
			for (let k = 0; k < 3; k++) { got += (await tools.echo({i: k})).i; want += k; n++; }
			const vs = await Promise.all(batch);
			vs.forEach((v, k) => { got += v.i; want += round * 1000 + k; n++; });
		}
		return [got === want ? "ok" : got + " != " + want, String(n)];`)
	require.True(t, r.OK(), r.Text)
	var out struct{ Result []string }
	require.NoError(t, json.Unmarshal(r.Value, &out), string(r.Value))
	require.Equal(t, []string{"ok", "685"}, out.Result)
}
