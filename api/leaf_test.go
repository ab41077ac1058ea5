package api_test

import (
	"go/importer"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// api is the leaf every package may import: it imports only the standard
// library (an import path whose first element has no dot), so it can never
// be part of an import cycle.
func TestAPI_importsOnlyTheStandardLibrary(t *testing.T) {
	pkg, err := importer.ForCompiler(token.NewFileSet(), "source", nil).Import("github.com/ptcx/ptcx/api")
	require.NoError(t, err)
	require.NotEmpty(t, pkg.Imports())
	for _, imp := range pkg.Imports() {
		first, _, _ := strings.Cut(imp.Path(), "/")
		require.NotContains(t, first, ".", "api imports %s", imp.Path())
	}
}
