package wasmhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost"
)

// TestRuntime_Trim: what a Runtime keeps only to be faster — the resume
// spares a suspension and its resume leave, and recycled snapshot buffers
// — is given back by Trim, and the Runtime runs and resumes as before.
func TestRuntime_Trim(t *testing.T) {
	rt := newRuntime(t, testConfig())
	ctx := context.Background()
	// A program that grows past the image and suspends: its memory becomes
	// a resume spare, its snapshot buffer a recycled one once resumed.
	prog := wasmhost.Program{JS: `const a = new Array(200000).fill(7); const v = await tools.slow({ms: 1}); return a.length + v`,
		Tools: toolNames, Suspend: func(q wasmhost.Quiescence) bool { return len(q.Calls) > 0 }}
	out, err := rt.Run(ctx, prog, &tools{})
	require.NoError(t, err)
	require.NotNil(t, out.Suspended)
	res, err := rt.Resume(ctx, out.Suspended.Snapshot, &tools{}, wasmhost.Resumption{
		Results: map[int32]wasmhost.CallResult{out.Suspended.Calls[0].ID: {OK: true, Value: []byte(`1`)}}, Recycle: out.Suspended})
	require.NoError(t, err)
	require.JSONEq(t, `200001`, string(res.Result))
	before := rt.PoolStats()
	require.Positive(t, before.ResumeSpares+before.SnapshotBuffers, "the suspension and its resume left something to trim: %+v", before)

	rt.Trim()
	after := rt.PoolStats()
	require.Zero(t, after.ResumeSpares, "%+v", after)
	require.Zero(t, after.SnapshotBuffers, "%+v", after)

	out, err = rt.Run(ctx, prog, &tools{})
	require.NoError(t, err)
	require.NotNil(t, out.Suspended, "the Runtime suspends as before")
}
