package ptcx_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx"
	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

func TestHost_Execute_session(t *testing.T) {
	h := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool), ptcx.WithSessions(ptcx.SessionLimits{}))
	run := func(session, code string) string {
		c := runCode("", code)
		c.Session = session
		r := h.Execute(context.Background(), c)
		require.Nil(t, r.Err, "%v", r.Err)
		return r.Text
	}
	require.Equal(t, "3", run("chat", `const sum = await tools.add({a: 1, b: 2}); return sum`))
	require.Equal(t, "13", run("chat", `return sum + 10`))
	require.Equal(t, "undefined", run("other", `return typeof sum`))
	require.Equal(t, "undefined", run("", `return typeof sum`))
	require.True(t, closedOK(t)(h.CloseSession(context.Background(), "", "chat")))
	require.Equal(t, "undefined", run("chat", `return typeof sum`))
}

func TestHost_sessionPrompt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []ptcx.Option
		sessions bool
	}{
		{"without sessions", nil, false},
		{"with sessions", []ptcx.Option{ptcx.WithSessions(ptcx.SessionLimits{})}, true},
		{"with sessions, plain description", []ptcx.Option{ptcx.WithSessions(ptcx.SessionLimits{}), ptcx.WithPlainRunCodeDescription()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, append(tc.opts, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))...)
			tools, err := h.AnthropicTools("")
			require.NoError(t, err)
			require.Len(t, tools, 1)
			sections, err := h.Prompt("")
			require.NoError(t, err)
			last := sections[len(sections)-1]
			if !tc.sessions {
				require.NotContains(t, tools[0].Description, "State persists")
				require.NotEqual(t, executor.SectionSession, last.Name)
				return
			}
			require.Contains(t, tools[0].Description, registry.DefaultRunCodeDescription)
			require.Contains(t, tools[0].Description, executor.SessionPrompt)
			require.Equal(t, ptcx.Section{Name: executor.SectionSession, Text: executor.SessionPrompt}, last)
		})
	}
}

// A host built without WithSessions refuses a call that names a session:
// the state would persist where the model was never told it does.
func TestHost_Execute_sessionWithoutWithSessions(t *testing.T) {
	h := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(addTool))
	c := runCode("c1", `globalThis.kept = 1; return 1`)
	c.Session = "chat"
	r := h.Execute(context.Background(), c)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeInvalidArgs, r.Err.Code)
	require.Equal(t, `call c1 names session "chat", but this host was built without ptcx.WithSessions: add the option, or leave Session empty`, r.Err.Message)
}

// A tool that returns handles works in a session at the front door: a
// later program of the session passes the handle it kept, and the tool it
// reaches gets the value.
func TestHost_Execute_sessionKeepsHandles(t *testing.T) {
	private := ptcx.Label{Integrity: api.Untrusted, Confidentiality: api.Private}
	doc := ptcx.Func("read_doc", "Read the document.", func(context.Context, struct{}) (string, error) { return "the quarterly numbers", nil },
		ptcx.WithPolicy(ptcx.Policy{Labels: &private, Handle: true}))
	var got []string
	keep := ptcx.Func("keep", "Keep a text.", func(_ context.Context, a struct {
		Text string `json:"text"`
	}) (bool, error) {
		got = append(got, a.Text)
		return true, nil
	})
	h := newSandboxHost(t, ptcx.WithMode(ptcx.ModePTC), ptcx.WithTools(doc, keep), ptcx.WithSessions(ptcx.SessionLimits{}))
	run := func(code string) ptcx.Result {
		c := runCode("", code)
		c.Session = "chat"
		r := h.Execute(context.Background(), c)
		require.Nil(t, r.Err, "%v", r.Err)
		return r
	}
	first := run(`globalThis.d = await tools.read_doc({}); return d`)
	require.NotContains(t, first.Text, "quarterly", "the model sees a placeholder")
	require.Len(t, first.Handles, 1)
	r := run(`return await tools.keep({text: d})`)
	require.Equal(t, []string{"the quarterly numbers"}, got)
	require.Equal(t, private, r.Labels, "what flowed in flows out")
	require.Equal(t, "true", r.Text)
	require.True(t, closedOK(t)(h.CloseSession(context.Background(), "", "chat")))
	require.Equal(t, "undefined", run(`return typeof d`).Text)
}
