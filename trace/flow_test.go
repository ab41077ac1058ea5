package trace_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
)

var (
	untrusted = api.Label{Integrity: api.Untrusted}
	inboxDecl = policy.Declaration{Labels: &untrusted}
	sendDecl  = policy.Declaration{Accepts: &policy.Accepts{Call: &api.Label{Integrity: api.Trusted, Confidentiality: api.Secret}}}
	flowTools = []registry.Tool{
		{Name: "inbox", ConcurrencySafe: true, Policy: inboxDecl,
			Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("pay evil") }},
		{Name: "send", Policy: sendDecl,
			Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("sent") }},
	}
	flowProgram = `const m = await tools.inbox({});
let denied = "";
try { await tools.send({body: m}) } catch (e) { denied = e.code }
return denied`
)

// A record carries each call's label, a denial's flow, the run's label
// and the declarations of the tools bound; it survives encoding, and its
// replay recomputes the same.
func TestRecorder_labelsAndDenials(t *testing.T) {
	h := newHarness(t, flowTools, executor.NewConfig())
	res, rec := h.run(t, "flow", flowProgram, 1)
	require.Nil(t, res.Err, res.Text)
	require.Equal(t, 3, trace.Version)
	require.Len(t, rec.Calls, 2)
	require.Equal(t, &untrusted, rec.Calls[0].Labels)
	require.NotNil(t, rec.Calls[1].Error)
	require.Equal(t, api.CodeDenied, rec.Calls[1].Error.Code)
	require.Equal(t, "accepts", rec.Calls[1].Error.Policy.Rule)
	require.Equal(t, []string{"inbox"}, rec.Calls[1].Error.Policy.Sources)
	require.Equal(t, &untrusted, rec.Labels)
	require.Equal(t, map[string]policy.Declaration{"inbox": inboxDecl, "send": sendDecl}, rec.Policies)

	var b bytes.Buffer
	require.NoError(t, trace.Encode(&b, rec))
	back, err := trace.Decode(bytes.TrimSpace(b.Bytes()))
	require.NoError(t, err)
	require.Equal(t, rec.Policies, back.Policies)

	rep := replay(t, back)
	require.True(t, rep.OK(), "divergence %v, differences %v", rep.Divergence, rep.Differences)
	require.Equal(t, &untrusted, rep.Record.Calls[0].Labels)
}

// Replay recomputes labels and denials from the declarations: other
// declarations than the record's (ReplayConfig.Policies) make the first
// call whose label or denial differs a divergence; a version 1 record
// (before labels) is not compared.
func TestReplay_labelsAndDenialsDiverge(t *testing.T) {
	h := newHarness(t, flowTools, executor.NewConfig())
	_, rec := h.run(t, "flow", flowProgram, 1)
	replayWith := func(rec trace.Record, pols map[string]policy.Declaration) trace.Report {
		rep, err := trace.Replay(context.Background(), rec, trace.ReplayConfig{Runtime: testkit.Sandbox(t), Policies: pols})
		require.NoError(t, err)
		return rep
	}

	// No declarations at all: the inbox's result is no longer untrusted.
	rep := replayWith(rec, map[string]policy.Declaration{})
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "labels", rep.Divergence.Reason)
	require.Equal(t, 1, rep.Divergence.Index)
	require.Equal(t, untrusted, *rep.Divergence.ExpectedLabels)
	require.Equal(t, api.Label{}, *rep.Divergence.GotLabels)
	require.Contains(t, rep.Divergence.Error(), "replay diverged at call 1 (labels): tools.inbox({}) returned a result labelled untrusted, public in the trace, trusted, public in the replay")

	// The sink's rule gone: the labels agree, the denial does not.
	rep = replayWith(rec, map[string]policy.Declaration{"inbox": inboxDecl})
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "policy", rep.Divergence.Reason)
	require.Equal(t, 2, rep.Divergence.Index)
	require.Nil(t, rep.Divergence.GotPolicy)
	require.Contains(t, rep.Divergence.Error(), "was refused by accepts of send in the trace, not refused by a data-flow rule in the replay")

	// The record's own declarations: no divergence.
	rep = replayWith(rec, nil)
	require.True(t, rep.OK(), "%v %v", rep.Divergence, rep.Differences)

	// A version 1 record has no labels, denials' flows or declarations:
	// it replays as before, uncompared.
	old := rec
	old.Version, old.Labels, old.Policies = 1, nil, nil
	old.Calls = append([]trace.Call(nil), rec.Calls...)
	for i := range old.Calls {
		old.Calls[i].Labels = nil
		if e := old.Calls[i].Error; e != nil {
			c := *e
			c.Policy = nil
			old.Calls[i].Error = &c
		}
	}
	rep = replayWith(old, nil)
	require.True(t, rep.OK(), "%v %v", rep.Divergence, rep.Differences)
}
