package registry_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

// run_code's advertised schema has a language property only when a program
// may need to name its language (more than one, or Python alone), its enum
// the languages enabled; its arguments may name a language either way (the
// executor checks it).
func TestRunCodeLanguages_advertised(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	languageOf := func() (map[string]any, bool) {
		s, ok := reg.Get(registry.Deployment, registry.RunCode)
		require.True(t, ok)
		var schema struct {
			Properties map[string]map[string]any
		}
		require.NoError(t, json.Unmarshal(s.InputSchema, &schema))
		p, ok := schema.Properties["language"]
		return p, ok
	}
	_, ok := languageOf()
	require.False(t, ok, "TypeScript alone: no language property")
	reg.SetRunCodeLanguages([]api.Language{api.LanguageTypeScript})
	_, ok = languageOf()
	require.False(t, ok)
	reg.SetRunCodeLanguages([]api.Language{api.LanguageTypeScript, api.LanguagePython})
	p, ok := languageOf()
	require.True(t, ok)
	require.Equal(t, []any{"typescript", "python"}, p["enum"])
	// Python alone: a program must still say so (absent is TypeScript), so
	// the property is there, its enum Python alone.
	reg.SetRunCodeLanguages([]api.Language{api.LanguagePython})
	p, ok = languageOf()
	require.True(t, ok, "Python alone: the language property says it")
	require.Equal(t, []any{"python"}, p["enum"])
	require.Contains(t, p["description"], "python, which every program must name")
	require.NotContains(t, p["description"], "the default")
}
