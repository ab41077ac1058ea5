//go:build linux

package mcpbridge_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpbridge"
	"github.com/ptcx/ptcx/registry"
)

// changes collects the ToolsChange reports of a bridge.
type changes chan mcpbridge.ToolsChange

func (c changes) next(t *testing.T) mcpbridge.ToolsChange {
	t.Helper()
	select {
	case ch := <-c:
		return ch
	case <-time.After(20 * time.Second):
		t.Fatal("no refresh after tools/list_changed")
		return mcpbridge.ToolsChange{}
	}
}

func TestBridge_listChanged_refreshesTheTools(t *testing.T) {
	got := make(changes, 10)
	u := upstream()
	u.OnToolsChanged = func(ch mcpbridge.ToolsChange) { got <- ch }
	v := connect(t, u, api.ModeNative, executor.NewConfig())
	_, ok := v.reg.Get(registry.Deployment, "up.fresh")
	require.False(t, ok)

	v.ok(t, "up.addtool", `{"name":"fresh"}`)
	ch := got.next(t)
	require.NoError(t, ch.Err)
	require.Equal(t, []string{"up.fresh"}, ch.Added)
	require.Empty(t, ch.Removed)
	require.Contains(t, v.b.Tools(), "up.fresh")
	require.JSONEq(t, `"HI"`, string(v.ok(t, "up.fresh", `{"text":"hi"}`)))
	require.Equal(t, executor.Concurrent, v.exec.SchedulingClass(registry.Deployment, "up.fresh"), "its readOnlyHint counts")

	v.ok(t, "up.droptool", `{"name":"fresh"}`)
	ch = got.next(t)
	require.NoError(t, ch.Err)
	require.Equal(t, []string{"up.fresh"}, ch.Removed)
	r := v.call(context.Background(), "up.fresh", `{"text":"hi"}`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeUnknownTool, r.Err.Code)
	require.Contains(t, r.Err.Message, `upstream "up" no longer offers fresh (it changed its tool list)`)

	v.ok(t, "up.addtool", `{"name":"fresh"}`)
	ch = got.next(t)
	require.Equal(t, []string{"up.fresh"}, ch.Restored)
	require.JSONEq(t, `"BACK"`, string(v.ok(t, "up.fresh", `{"text":"back"}`)))
}

func TestBridge_listChanged_programSeesNewTool(t *testing.T) {
	rt := sharedRuntime(t)
	got := make(changes, 10)
	u := upstream()
	u.OnToolsChanged = func(ch mcpbridge.ToolsChange) { got <- ch }
	v := connect(t, u, api.ModePTC, executor.NewConfig().WithRuntime(rt))
	r := v.runCode(t, `await tools["up.addtool"]({name: "later"}); return "ok";`)
	require.Nil(t, r.Err, r.Text)
	require.Equal(t, []string{"up.later"}, got.next(t).Added)
	r = v.runCode(t, `return await tools["up.later"]({text: "abc"});`)
	require.Nil(t, r.Err, r.Text)
	require.Equal(t, "ABC", r.Text)
}

func TestBridge_listChanged_maxTools(t *testing.T) {
	const initial = 18 // the test upstream's tools, badschema skipped
	tests := []struct {
		name      string
		max       int
		wantAdded []string
	}{
		{"below", initial + 3, []string{"up.t1", "up.t2"}},
		{"at", initial + 2, []string{"up.t1", "up.t2"}},
		{"past", initial + 1, []string{"up.t1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(changes, 10)
			u := upstream()
			u.MaxTools = tt.max
			u.OnToolsChanged = func(ch mcpbridge.ToolsChange) { got <- ch }
			v := connect(t, u, api.ModeNative, executor.NewConfig())
			require.Len(t, v.b.Tools(), initial)
			var added []string
			for _, name := range []string{"t1", "t2"} {
				v.ok(t, "up.addtool", fmt.Sprintf(`{"name":%q}`, name))
				ch := got.next(t)
				require.NoError(t, ch.Err)
				added = append(added, ch.Added...)
				if !slices.Contains(ch.Added, "up."+name) {
					require.Contains(t, ch.Warnings, fmt.Sprintf(`upstream "up": tool "up.%s" skipped: the bridge registers at most %d tools of an upstream (Upstream.MaxTools)`, name, tt.max))
				}
			}
			require.Equal(t, tt.wantAdded, added)
			require.Len(t, v.b.Tools(), initial+len(tt.wantAdded))
		})
	}
}

func TestConnect_twoInstancesOfOneUpstream(t *testing.T) {
	rt := sharedRuntime(t)
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	var pids []string
	for _, prefix := range []string{"a", "b"} {
		b, err := mcpbridge.Connect(context.Background(), reg, registry.Deployment,
			mcpbridge.Upstream{Command: []string{upstreamBin}, Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, b.Close()) })
		require.Equal(t, prefix, b.Prefix())
		require.Contains(t, b.Tools(), prefix+".pid")
		pids = append(pids, prefix+".pid")
	}
	e, err := executor.New(reg, executor.NewConfig().WithRuntime(rt))
	require.NoError(t, err)
	v := &env{reg: reg, exec: e}
	r := v.runCode(t, `const [a, b] = await Promise.all([tools["a.pid"]({}), tools["b.pid"]({})]);
return a.pid !== b.pid && a.pid > 0 && b.pid > 0;`)
	require.Nil(t, r.Err, r.Text)
	require.Equal(t, "true", r.Text, "two processes answer")

	// The same upstream again under a taken prefix is refused, naming the fix.
	_, err = mcpbridge.Connect(context.Background(), reg, registry.Deployment,
		mcpbridge.Upstream{Command: []string{upstreamBin}, Prefix: "a"})
	require.ErrorContains(t, err, "is already registered")
	require.ErrorContains(t, err, "give this upstream another prefix")
}

func TestBridge_listChanged_nameTakenElsewhere(t *testing.T) {
	got := make(changes, 10)
	u := upstream()
	u.OnToolsChanged = func(ch mcpbridge.ToolsChange) { got <- ch }
	v := connect(t, u, api.ModeNative, executor.NewConfig())
	require.NoError(t, v.reg.Register(registry.Deployment, registry.Tool{
		Name: "up.fresh",
		Body: func(context.Context, api.Input) (api.Output, error) { return api.ValueOutput("the host's own") },
	}))
	v.ok(t, "up.addtool", `{"name":"fresh"}`)
	ch := got.next(t)
	require.NoError(t, ch.Err)
	require.Empty(t, ch.Added)
	require.Equal(t, []string{`upstream "up": new tool "up.fresh" skipped: the name is already registered for scope "deployment"`}, ch.Warnings)
	require.JSONEq(t, `"the host's own"`, string(v.ok(t, "up.fresh", `{}`)), "the host's tool is untouched")
	require.NotContains(t, v.b.Tools(), "up.fresh")
}
