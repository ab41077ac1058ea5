package sdkgen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pyrightVersion is the release scripts/pyright/package.json pins.
const pyrightVersion = "1.1.414"

// pyDiag is one error pyright reported.
type pyDiag struct {
	Line int // 1-based
	Rule string
	Msg  string
}

// pyrightPath finds the pyright that `make tsc` installs (scripts/install-pyright.sh), or fails
// the test saying to install it.
func pyrightPath(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "module root (go.mod) not found above the test's directory")
		dir = parent
	}
	base := filepath.Join(dir, ".tools", "pyright", "node_modules", "pyright")
	pkg, err := os.ReadFile(filepath.Join(base, "package.json"))
	require.NoError(t, err, "pyright is not installed in %s: run `make tsc`", base)
	var meta struct{ Version string }
	require.NoError(t, json.Unmarshal(pkg, &meta))
	require.Equal(t, pyrightVersion, meta.Version, "wrong pyright in %s: run `make tsc`", base)
	_, err = exec.LookPath("node")
	require.NoError(t, err, "node is not on PATH: run `make tsc`, which installs it")
	return filepath.Join(base, "index.js")
}

// runPyright type-checks every file (paths relative to one project directory; `.pyi` files are
// stub modules the `.py` programs import) in one pyright run, Python 3.13, standard checking,
// and returns the errors by file path. Warnings (a stub without a source module) are not errors.
func runPyright(t *testing.T, files map[string]string) map[string][]pyDiag {
	t.Helper()
	pyright := pyrightPath(t)
	dir := t.TempDir()
	names := make([]string, 0, len(files))
	for name, text := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		names = append(names, name)
	}
	config := map[string]any{"pythonVersion": "3.13", "typeCheckingMode": "standard", "include": names}
	cfg, err := json.Marshal(config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pyrightconfig.json"), cfg, 0o644))

	cmd := exec.Command("node", pyright, "--outputjson", "-p", dir)
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		require.NoError(t, err, "running pyright")
	}
	var report struct {
		GeneralDiagnostics []struct {
			File     string
			Severity string
			Message  string
			Rule     string
			Range    struct{ Start struct{ Line int } }
		}
		Summary struct{ FilesAnalyzed int }
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &report), "pyright's output:\n%s\n%s", out.String(), stderr.String())
	require.Equal(t, len(files), report.Summary.FilesAnalyzed, "pyright checked every file")
	diags := map[string][]pyDiag{}
	for _, d := range report.GeneralDiagnostics {
		if d.Severity != "error" {
			continue
		}
		rel, err := filepath.Rel(dir, d.File)
		require.NoError(t, err)
		diags[rel] = append(diags[rel], pyDiag{Line: d.Range.Start.Line + 1, Rule: d.Rule, Msg: d.Message})
	}
	if err != nil {
		require.NotEmpty(t, diags, "pyright failed without errors:\n%s\n%s", out.String(), stderr.String())
	}
	return diags
}

// pyProgram wraps a program body, as run_code runs it (a module whose top level may await), into
// an async function that pyright accepts, importing the stub module sdk.
func pyProgram(sdk, body string) string {
	lines := strings.Split(strings.Trim(body, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return "import asyncio\nfrom " + sdk + " import tools, ToolCallError, JsonValue\n\nasync def program() -> object:\n" +
		strings.Join(lines, "\n") + "\n    return None\n\nasyncio.run(program())\n"
}
