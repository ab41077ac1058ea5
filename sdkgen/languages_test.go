package sdkgen_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/sdkgen"
)

func TestLanguagesSection(t *testing.T) {
	both := []api.Language{api.LanguageTypeScript, api.LanguagePython}
	require.Empty(t, sdkgen.LanguagesSection(api.ModePTC, nil), "TypeScript alone: nothing to say")
	require.Empty(t, sdkgen.LanguagesSection(api.ModePTC, []api.Language{api.LanguageTypeScript}))
	require.Empty(t, sdkgen.LanguagesSection(api.ModeNative, both), "no run_code")
	text := sdkgen.LanguagesSection(api.ModePTC, both)
	require.Contains(t, text, "`\"typescript\"` or `\"python\"`")
	require.Contains(t, text, "await tools.name(key=value)")
	require.Contains(t, text, "asyncio.gather")
	require.Contains(t, text, "its value is the result")
	s := sdkgen.WithLanguagesSection(nil, api.ModeBoth, both)
	require.Len(t, s, 1)
	require.Equal(t, sdkgen.SectionLanguages, s[0].Name)
	require.Empty(t, sdkgen.WithLanguagesSection(nil, api.ModeBoth, nil))
}
