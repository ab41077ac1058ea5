package sdkgen

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// toolFile is the JSON form of a tool in testdata.
type toolFile struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Handle       bool            `json:"handle"`
}

// loadTools reads a JSON array of tools from testdata.
func loadTools(t testing.TB, name string) []api.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var files []toolFile
	require.NoError(t, json.Unmarshal(data, &files))
	tools := make([]api.Schema, len(files))
	for i, f := range files {
		tools[i] = api.Schema{Name: f.Name, Description: f.Description, InputSchema: f.InputSchema, OutputSchema: f.OutputSchema, Handle: f.Handle}
	}
	return tools
}

// golden compares got with testdata/name, or rewrites the file under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run: go test ./sdkgen -update")
	require.Equal(t, string(want), got, "output differs from %s; if the change is intended, run: go test ./sdkgen -update", path)
}

// mustDeclarations renders tools and fails the test on error.
func mustDeclarations(t testing.TB, tools []api.Schema) string {
	t.Helper()
	out, err := Declarations(tools)
	require.NoError(t, err)
	return out
}
