package serve_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/testkit"
	"github.com/ptcx/ptcx/serve"
)

// promptSections is GET /v1/prompt's answer: the sections' names and texts.
func promptSections(t *testing.T, body string) map[string]string {
	t.Helper()
	var out struct {
		Sections []struct{ Name, Text string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	m := map[string]string{}
	for _, s := range out.Sections {
		m[s.Name] = s.Text
	}
	return m
}

// GET /v1/prompt?language= picks the language the prompt declares the
// tools in; one the tenant does not run, or no language at all, is a 400
// naming the choices.
func TestServe_promptLanguage_bad(t *testing.T) {
	ts := newServer(t, nil)
	for _, tc := range []struct{ query, want string }{
		{"python", `the prompt's language \"python\" is not one this deployment runs: it runs typescript`},
		{"cobol", `the prompt's language \"cobol\" is unknown: the languages are typescript and python`},
		{"Python", `the prompt's language \"Python\" is unknown`},
	} {
		status, body, _ := raw(t, "GET", ts.url+"/v1/prompt?language="+tc.query, keyA, "")
		require.Equal(t, 400, status, body)
		require.Contains(t, body, tc.want)
	}
	status, body, _ := raw(t, "GET", ts.url+"/v1/prompt?language=typescript", keyA, "")
	require.Equal(t, 200, status, body)
	require.Contains(t, promptSections(t, body)["tools:sdk"], "```ts")
}

// A tenant that runs both languages gets TypeScript's prompt by default and
// Python's when it asks.
func TestServe_promptLanguage_python(t *testing.T) {
	testkit.RequirePython(t)
	ts := newServer(t, func(c *serve.Config) {
		c.Tenants[0].Languages = []api.Language{api.LanguageTypeScript, api.LanguagePython}
	})
	status, body, _ := raw(t, "GET", ts.url+"/v1/prompt", keyA, "")
	require.Equal(t, 200, status, body)
	s := promptSections(t, body)
	require.Contains(t, s["tools:sdk"], "```ts")
	require.Contains(t, s["tools:languages"], "asyncio.gather")

	status, body, _ = raw(t, "GET", ts.url+"/v1/prompt?language=python", keyA, "")
	require.Equal(t, 200, status, body)
	s = promptSections(t, body)
	require.Contains(t, s["tools:sdk"], "```python\nfrom typing import")
	require.Contains(t, s["tools:sdk"], "class Tools(Protocol):")
	require.Contains(t, s["tools:languages"], "Promise.all")
}
