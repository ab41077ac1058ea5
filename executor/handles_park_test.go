package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// TestHandles_parkedBytes: the handles an execution holds go with its
// parked bytes, values and all, and answer in the executor that restores
// it: a read, a pass to a tool, a placeholder in the result.
func TestHandles_parkedBytes(t *testing.T) {
	newHost := func() (*executor.Executor, *sink) {
		echo := &sink{}
		reg := registry.New()
		require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "approve",
			Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("the body ran") }}))
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "doc", ConcurrencySafe: true,
			Policy: policy.Declaration{Labels: &private, Handle: true},
			Body:   func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("the quarterly numbers") }}))
		require.NoError(t, reg.Register(registry.Deployment, registry.Tool{Name: "echo", Body: echo.body}))
		ex, err := executor.New(reg, executor.NewConfig().WithRuntime(realRuntime(t)))
		require.NoError(t, err)
		return ex, echo
	}
	a, _ := newHost()
	b, echo := newHost()
	res, parked := a.ExecuteParkable(context.Background(), runCodeCall(`
		const h = await tools.doc({});
		const ok = await tools.approve({what: "send"});
		await tools.echo({deep: [h]});
		return {ok, h, text: await h.text()};`), isApprove)
	require.NotNil(t, parked, "not parked: %+v", res)
	data, err := parked.Marshal()
	require.NoError(t, err)
	require.True(t, parked.Release())

	// Another execution that writes this one's ref gets no value: the ref
	// is read here from the parked bytes, where the host keeps it.
	at := bytes.Index(data, []byte(`"handles":[{"ref":"`))
	require.Positive(t, at)
	ref := string(data[at+len(`"handles":[{"ref":"`) : at+len(`"handles":[{"ref":"`)+32])
	other := runProgram(b, strings.Replace(catchFirst, "%s", `await tools.doc({});
		return await tools.echo({stolen: {"$ptcx.handle": "`+ref+`"}})`, 1))
	require.Contains(t, string(heldResult(t, other)), "is handle-shaped but not a handle this execution holds")
	require.Empty(t, echo.got(), "nothing reached the tool")

	restored, err := b.RestoreParked(data)
	require.NoError(t, err)
	res, again := restored.Resume(context.Background(), map[int32]executor.Answer{2: {Output: api.Output{Value: json.RawMessage(`"yes"`)}}})
	require.Nil(t, again)
	require.True(t, res.OK(), "%+v", res.Err)
	require.Equal(t, []string{`{"deep":["the quarterly numbers"]}`}, echo.got(), "the restored handle passes its value")
	require.Len(t, res.Handles, 1)
	require.JSONEq(t, `"the quarterly numbers"`, string(res.Handles[0].Value))
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(res.Value, &v))
	var out struct {
		OK, Text string
		H        map[string]api.Handle `json:"h"`
	}
	require.NoError(t, json.Unmarshal(v.Result, &out))
	require.Equal(t, "the quarterly numbers", out.Text)
	require.Equal(t, res.Handles[0].ID, out.H["$handle"].ID)
	require.Equal(t, private, res.Labels, "read after the restore: its label joined")
}

// TestHandles_parkedBytes_checked: restored handles no execution could
// have held are refused.
func TestHandles_parkedBytes_checked(t *testing.T) {
	good := executor.ParkedHandleForTest("0123456789abcdef0123456789abcdef", "h_0123456789abcdef0123456789abcdef", `"v"`)
	require.NoError(t, executor.CheckParkedHandles(good))
	for name, hs := range map[string][]executor.ParkedHandle{
		"a short ref":      executor.ParkedHandleForTest("0123", "h_0123456789abcdef0123456789abcdef", `"v"`),
		"a value not JSON": executor.ParkedHandleForTest("0123456789abcdef0123456789abcdef", "h_0123456789abcdef0123456789abcdef", `{`),
		"named twice":      append(good, good...),
	} {
		require.Error(t, executor.CheckParkedHandles(hs), name)
	}
	defer executor.SetHandleBounds(1, 2)()
	require.ErrorContains(t, executor.CheckParkedHandles(executor.ParkedHandleForTest("0123456789abcdef0123456789abcdef", "h_0123456789abcdef0123456789abcdef", `"vv"`)),
		"over the 2 an execution's may")
}
