package sdkgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tscVersion is the TypeScript release scripts/tsc/package.json pins.
const tscVersion = "5.9.3"

// tscDiag is one diagnostic tsc printed.
type tscDiag struct {
	Line int // 1-based, in the file tsc read
	Code string
	Msg  string
}

func (d tscDiag) String() string { return fmt.Sprintf("%d: %s %s", d.Line, d.Code, d.Msg) }

// tscPath finds the compiler that `make tsc` installs, or fails the test saying to install it.
func tscPath(t *testing.T) string {
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
	base := filepath.Join(dir, ".tools", "tsc", "node_modules", "typescript")
	pkg, err := os.ReadFile(filepath.Join(base, "package.json"))
	require.NoError(t, err, "the TypeScript compiler is not installed in %s: run `make tsc`", base)
	var meta struct{ Version string }
	require.NoError(t, json.Unmarshal(pkg, &meta))
	require.Equal(t, tscVersion, meta.Version, "wrong TypeScript in %s: run `make tsc`", base)
	_, err = exec.LookPath("node")
	require.NoError(t, err, "node is not on PATH: run `make tsc`, which installs it")
	return filepath.Join(base, "bin", "tsc")
}

var tscLine = regexp.MustCompile(`^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$`)

// runTSC type-checks every file in one compiler run (`--strict --noEmit`, ES2023 library, no
// DOM or Node types: a program sees only what the declarations give it) and returns the
// diagnostics by file name. A file that is a module (it ends in `export {}`) has a scope of its
// own, so many declaration blocks can be checked side by side.
func runTSC(t *testing.T, files map[string]string) map[string][]tscDiag {
	t.Helper()
	tsc := tscPath(t)
	dir := t.TempDir()
	names := make([]string, 0, len(files))
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
		names = append(names, name)
	}
	config := map[string]any{
		"compilerOptions": map[string]any{
			"strict": true, "noEmit": true, "target": "es2022", "lib": []string{"es2023"},
			"types": []string{}, "noUnusedLocals": false,
			// The standard library declarations are trusted; skipping their check halves the run.
			"skipLibCheck": true,
		},
		"files": names,
	}
	cfg, err := json.Marshal(config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tsconfig.json"), cfg, 0o644))

	cmd := exec.Command("node", tsc, "-p", dir, "--pretty", "false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		require.NoError(t, err, "running tsc")
	}
	diags := map[string][]tscDiag{}
	var last *tscDiag
	for _, line := range strings.Split(out.String(), "\n") {
		if m := tscLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			file := filepath.Base(m[1])
			diags[file] = append(diags[file], tscDiag{Line: n, Code: m[4], Msg: m[5]})
			last = &diags[file][len(diags[file])-1]
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		require.True(t, last != nil && strings.HasPrefix(line, " "), "unexpected tsc output: %q\n%s", line, out.String())
		last.Msg += "\n" + line
	}
	if err != nil {
		require.NotEmpty(t, diags, "tsc failed without diagnostics:\n%s", out.String())
	}
	return diags
}

// asModule wraps a declaration block and a program body into one self-contained module.
// The program is the body of an async function, as run_code runs it.
func asModule(decls, body string) string {
	return decls + "\nasync function __program() {\n" + body + "\n}\nexport {};\n"
}
