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
