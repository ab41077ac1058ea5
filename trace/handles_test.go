package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	secret   = api.Label{Confidentiality: api.Secret}
	docDecl  = policy.Declaration{Handle: true, Labels: &untrusted}
	bigValue = strings.Repeat("x", 200) // over handleOver
	// handleTools: doc is declared to answer with handles, big answers
	// over the executor's handle size, send takes anything and tag's
	// body raises its result's label.
	handleTools = []registry.Tool{
		{Name: "doc", ConcurrencySafe: true, Policy: docDecl,
			Body: func(context.Context, api.Input) (api.Output, error) {
				return api.ValueOutput(map[string]string{"body": "quarterly numbers"})
			}},
		{Name: "big", ConcurrencySafe: true,
			Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput(bigValue) }},
		{Name: "send",
			Body: func(_ context.Context, in api.Input) (api.Output, error) { return api.ValueOutput(len(in.Args)) }},
		{Name: "tag", ConcurrencySafe: true,
			Body: func(context.Context, api.Input) (api.Output, error) {
				return api.Output{Value: json.RawMessage(`"tagged"`), Labels: secret}, nil
			}},
	}
	handleOver = 100
	// handleProgram reads both handles, passes the first in a later call
	// and returns it (the model is shown its placeholder, with its ID).
	handleProgram = `const d = await tools.doc({});
const t = await d.text();
const b = await tools.big({});
const j = await b.json();
const sent = await tools.send({to: "x", body: {doc: d}});
return {t, n: j.length, sent, d};`
)

func handleHarness(t *testing.T) *harness {
	return newHarness(t, handleTools, executor.NewConfig().WithHandleOverBytes(handleOver))
}

func replayCfg(t *testing.T, rec trace.Record, cfg trace.ReplayConfig) trace.Report {
	t.Helper()
	cfg.Runtime = testkit.Sandbox(t)
	rep, err := trace.Replay(context.Background(), rec, cfg)
	require.NoError(t, err)
	return rep
}

// A record says which calls answered with handles, which the program read
// and which it passed; it survives encoding and replays clean, the
// handles fed back as handles and named as recorded.
func TestReplay_handles(t *testing.T) {
	h := handleHarness(t)
	res, rec := h.run(t, "hd", handleProgram, 7)
	require.Nil(t, res.Err, res.Text)
	require.Len(t, res.Handles, 1)

	require.Equal(t, handleOver, rec.HandleOverBytes)
	require.Len(t, rec.Calls, 3)
	doc, big, send := rec.Calls[0], rec.Calls[1], rec.Calls[2]
	require.NotNil(t, doc.Handle)
	require.Equal(t, res.Handles[0].ID, doc.Handle.ID)
	require.Equal(t, trace.Handle{ID: doc.Handle.ID, Tool: "doc", Size: len(doc.Value), Labels: untrusted}, *doc.Handle)
	require.JSONEq(t, `{"body":"quarterly numbers"}`, string(doc.Value))
	require.NotNil(t, big.Handle, "over the handle size")
	require.Equal(t, untrusted, big.Handle.Labels, "called after the program read doc's")
	require.Nil(t, send.Handle)
	require.Equal(t, []trace.Passed{{ID: doc.Handle.ID, Call: 1}}, send.Handles)
	require.JSONEq(t, `{"to":"x","body":{"doc":{"body":"quarterly numbers"}}}`, string(send.Args), "the values in the handles' place")
	require.Equal(t, []trace.Read{
		{Handle: doc.Handle.ID, Call: 1, As: "text", Labels: untrusted},
		{Handle: big.Handle.ID, Call: 2, As: "json", Labels: untrusted},
	}, rec.Reads)
	require.Contains(t, rec.Text, doc.Handle.ID)

	var b bytes.Buffer
	require.NoError(t, trace.Encode(&b, rec))
	back, err := trace.Decode(bytes.TrimSpace(b.Bytes()))
	require.NoError(t, err)
	require.Equal(t, rec.Reads, back.Reads)
	require.Equal(t, rec.Calls[2].Handles, back.Calls[2].Handles)

	rep := replay(t, back)
	require.True(t, rep.OK(), "divergence %v, differences %v", rep.Divergence, rep.Differences)
	require.Equal(t, rec.Text, rep.Record.Text)
	require.Equal(t, rec.Reads, rep.Record.Reads)
	for i := range rec.Calls {
		require.Equal(t, rec.Calls[i].Handle, rep.Record.Calls[i].Handle, "call %d", i+1)
		require.Equal(t, rec.Calls[i].Handles, rep.Record.Calls[i].Handles, "call %d", i+1)
		require.Equal(t, string(rec.Calls[i].Args), string(rep.Record.Calls[i].Args), "call %d", i+1)
	}
	require.NotEqual(t, doc.Handle.ID, rep.Result.Handles[0].ID, "a fresh handle, renamed in the replay's record")
}

// A declaration changed from handle to not, or the reverse, diverges at
// the call, with a message saying how each answered.
func TestReplay_handleDeclarationChanged(t *testing.T) {
	h := handleHarness(t)
	_, rec := h.run(t, "hd", handleProgram, 7)

	rep := replayCfg(t, rec, trace.ReplayConfig{Policies: map[string]policy.Declaration{"doc": {Labels: &untrusted}}})
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "handle", rep.Divergence.Reason)
	require.Equal(t, 1, rep.Divergence.Index)
	require.True(t, rep.Divergence.ExpectedHandle)
	require.False(t, rep.Divergence.GotHandle)
	require.Equal(t, "replay diverged at call 1 (handle): tools.doc({}) answered the program with a handle in the trace, with its value in the replay",
		rep.Divergence.Error())

	// send, not declared a handle tool when recorded, now is.
	rep = replayCfg(t, rec, trace.ReplayConfig{Policies: map[string]policy.Declaration{"doc": docDecl, "send": {Handle: true}}})
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "handle", rep.Divergence.Reason)
	require.Equal(t, 3, rep.Divergence.Index)
	require.Contains(t, rep.Divergence.Error(), "answered the program with its value in the trace, with a handle in the replay")

	// The handle's label changed: the call's label, and so the read's.
	rep = replayCfg(t, rec, trace.ReplayConfig{Policies: map[string]policy.Declaration{"doc": {Handle: true, Labels: &secret}}})
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "labels", rep.Divergence.Reason)
	require.Equal(t, 1, rep.Divergence.Index)
	require.Contains(t, rep.Divergence.Error(), "untrusted, public in the trace, trusted, secret in the replay")
}

// The program reading other handles, or in another way, than the record
// says, or passing others, diverges.
func TestReplay_handleReadsAndPassesDiverge(t *testing.T) {
	h := handleHarness(t)
	_, rec := h.run(t, "hd", handleProgram, 7)
	clone := func() trace.Record {
		r := rec
		r.Calls = append([]trace.Call(nil), rec.Calls...)
		r.Reads = append([]trace.Read(nil), rec.Reads...)
		return r
	}

	other := clone()
	other.Reads[0].As = "json"
	rep := replay(t, other)
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "read", rep.Divergence.Reason)
	require.Equal(t, 1, rep.Divergence.Read)
	require.Equal(t, "replay diverged at read 1 of a handle (read): expected json() of the handle call 1 answered, tools.doc({}), got text() of the handle call 1 answered, tools.doc({})",
		rep.Divergence.Error())

	missing := clone()
	missing.Reads = append(missing.Reads, trace.Read{Handle: rec.Calls[1].Handle.ID, Call: 2, As: "text"})
	rep = replay(t, missing)
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "read", rep.Divergence.Reason)
	require.Contains(t, rep.Divergence.Error(), "read 3 of a handle (read): expected text() of the handle call 2 answered, tools.big({}), got no read (the program settled)")

	extra := clone()
	extra.Reads = extra.Reads[:1]
	rep = replay(t, extra)
	require.NotNil(t, rep.Divergence)
	require.Contains(t, rep.Divergence.Error(), "read 2 of a handle (read): expected no read, got json() of the handle call 2 answered")

	passed := clone()
	passed.Calls[2].Handles = nil // as if the program had passed the value itself
	rep = replay(t, passed)
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "handles", rep.Divergence.Reason)
	require.Equal(t, 3, rep.Divergence.Index)
	require.Contains(t, rep.Divergence.Error(), `was passed no handle in the trace, the handles of calls 1 in the replay`)
}

// A "what if" replay (real tools) holds the recorded calls' handles
// itself: the program reads them and passes them, to a real tool past the
// trace too.
func TestReplay_handlesWhatIf(t *testing.T) {
	h := handleHarness(t)
	const prefix = `const d = await tools.doc({});
const t = await d.text();
const big = await tools.big({});
`
	res, rec := h.run(t, "hw", prefix+`return t`, 7)
	require.Nil(t, res.Err, res.Text)
	rec.Program.Code = prefix + `const n = await tools.send({d, big}); const j = await big.json(); return [t, n, j.length]`
	rep := replayCfg(t, rec, trace.ReplayConfig{Registry: h.reg})
	require.Nil(t, rep.Divergence)
	require.Nil(t, rep.Result.Err, rep.Result.Text)
	require.JSONEq(t, `["{\"body\":\"quarterly numbers\"}", 243, 200]`, string(rep.Record.Result))
	require.Len(t, rep.Record.Reads, 2)
	require.Equal(t, rec.Calls[0].Handle, rep.Record.Calls[0].Handle)
}

// A label a tool's body raised is recorded and raised again by the
// replay's stand-in: the run replays clean; a changed declaration still
// diverges.
func TestReplay_bodyRaisedLabel(t *testing.T) {
	h := handleHarness(t)
	res, rec := h.run(t, "tag", `return await tools.tag({})`, 1)
	require.Nil(t, res.Err, res.Text)
	require.Equal(t, &secret, rec.Calls[0].Raised)
	require.Equal(t, &secret, rec.Calls[0].Labels)
	require.Equal(t, &secret, rec.Labels)

	rep := replay(t, rec)
	require.True(t, rep.OK(), "divergence %v, differences %v", rep.Divergence, rep.Differences)
	require.Equal(t, &secret, rep.Record.Calls[0].Labels)

	rep = replayCfg(t, rec, trace.ReplayConfig{Policies: map[string]policy.Declaration{"tag": {Labels: &untrusted}}})
	require.NotNil(t, rep.Divergence)
	require.Equal(t, "labels", rep.Divergence.Reason)
	require.Contains(t, rep.Divergence.Error(), "labelled trusted, secret in the trace, untrusted, secret in the replay")

	// A tool raising nothing records nothing raised.
	_, plain := h.run(t, "plain", `return await tools.send({})`, 1)
	require.Nil(t, plain.Calls[0].Raised)
}

// A version 2 record (before handles and raised labels) still reads and
// replays.
func TestReplay_version2Record(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "golden-v2.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	rec, err := trace.NewReader(f, 0).Next()
	require.NoError(t, err)
	require.Equal(t, 2, rec.Version)
	rep := replay(t, rec)
	require.True(t, rep.OK(), "divergence %v, differences %v", rep.Divergence, rep.Differences)
}
