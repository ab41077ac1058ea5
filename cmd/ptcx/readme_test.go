package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README shows examples/shop/tools.json whole: the copy is the file, and
// the file loads.
func TestReadme_toolsFileSnippetIsTheRealFile(t *testing.T) {
	const file = "examples/shop/tools.json"
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	real, err := os.ReadFile(filepath.Join("../..", file))
	require.NoError(t, err)

	intro := "`" + file + "`, whole"
	i := strings.Index(string(readme), intro)
	require.GreaterOrEqual(t, i, 0, "the README introduces the file with %q", intro)
	rest := string(readme)[i:]
	start := strings.Index(rest, "```json\n")
	require.GreaterOrEqual(t, start, 0)
	rest = rest[start+len("```json\n"):]
	end := strings.Index(rest, "```\n")
	require.GreaterOrEqual(t, end, 0)
	require.Equal(t, string(real), rest[:end], "the README's copy of %s differs from the file", file)

	out, errOut, status := ptcx(t, "", "tools", "--no-builtin", "--tools", filepath.Join("../..", file))
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, "scope deployment, mode ptc")
}
