package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/cli.md shows examples/shop/tools.json whole: the copy is the file, and
// the file loads.
func TestCLIDoc_toolsFileSnippetIsTheRealFile(t *testing.T) {
	const file = "examples/shop/tools.json"
	doc, err := os.ReadFile("../../../../docs/cli.md")
	require.NoError(t, err)
	real, err := os.ReadFile(filepath.Join("../../../..", file))
	require.NoError(t, err)

	intro := "`" + file + "`, whole"
	i := strings.Index(string(doc), intro)
	require.GreaterOrEqual(t, i, 0, "docs/cli.md introduces the file with %q", intro)
	rest := string(doc)[i:]
	start := strings.Index(rest, "```json\n")
	require.GreaterOrEqual(t, start, 0)
	rest = rest[start+len("```json\n"):]
	end := strings.Index(rest, "```\n")
	require.GreaterOrEqual(t, end, 0)
	require.Equal(t, string(real), rest[:end], "docs/cli.md's copy of %s differs from the file", file)

	out, errOut, status := ptcx(t, "", "tools", "--no-builtin", "--tools", filepath.Join("../../../..", file))
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, "scope deployment, mode ptc")
}
