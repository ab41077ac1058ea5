package sdkgen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestDeclarations_golden(t *testing.T) {
	golden(t, "declarations.golden", mustDeclarations(t, loadTools(t, "tools.json")))
}

func TestSections_golden(t *testing.T) {
	tools := loadTools(t, "tools.json")
	for _, mode := range []api.Mode{api.ModePTC, api.ModeBoth} {
		t.Run(mode.String(), func(t *testing.T) {
			sections, err := Sections(mode, tools)
			require.NoError(t, err)
			var b strings.Builder
			for _, s := range sections {
				b.WriteString("=== " + s.Name + "\n" + s.Text)
			}
			golden(t, "sections_"+mode.String()+".golden", b.String())
		})
	}
}

// The prompt of a deployment that runs Python: Python's alone, and both languages with the
// prompt in each.
func TestPromptSections_golden(t *testing.T) {
	tools := loadTools(t, "tools.json")
	ts, py := api.LanguageTypeScript, api.LanguagePython
	for _, tc := range []struct {
		name  string
		mode  api.Mode
		langs []api.Language
		lang  api.Language
	}{
		{"python_ptc", api.ModePTC, []api.Language{py}, ""},
		{"both_typescript", api.ModeBoth, []api.Language{ts, py}, ""},
		{"both_python", api.ModePTC, []api.Language{ts, py}, py},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sections, err := PromptSections(tc.mode, tools, tc.langs, tc.lang)
			require.NoError(t, err)
			var b strings.Builder
			for _, s := range sections {
				b.WriteString("=== " + s.Name + "\n" + s.Text)
			}
			golden(t, "prompt_"+tc.name+".golden", b.String())
		})
	}
}
