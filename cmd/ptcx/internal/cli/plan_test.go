package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const planProgram = `const a = await tools.lookup({key: "x"});
let saved = "no";
try { await tools.save({key: "k", text: JSON.stringify(a)}); saved = "yes" } catch (e: any) { saved = e.code }
return saved`

func TestPlan(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(planProgram), 0o644))

	out, errOut, status := ptcx(t, "", "plan", "--tools", toolsFile, "--no-builtin", prog)
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, "tools: lookup, save\ncalls:\n")
	require.Contains(t, out, `  line 1  lookup({key: "x"})  once`)
	require.Contains(t, out, `  line 3  save({key: "k", text: (computed)})  once`)

	out, _, status = ptcx(t, "", "plan", "--json", "--tools", toolsFile, "--no-builtin", prog)
	require.Equal(t, exitOK, status)
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Equal(t, []any{"lookup", "save"}, p["tools"])

	// Approved whole, it runs; with save removed, save is DENIED.
	approved := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(approved, []byte(out), 0o644))
	out, errOut, status = ptcx(t, "", "run", "--tools", toolsFile, "--no-builtin", "--plan", approved, prog)
	require.Equal(t, exitOK, status, errOut)
	require.Equal(t, "yes\n", out)
	p["tools"] = []any{"lookup"}
	b, _ := json.Marshal(p)
	require.NoError(t, os.WriteFile(approved, b, 0o644))
	out, _, status = ptcx(t, "", "run", "--tools", toolsFile, "--no-builtin", "--plan", approved, prog)
	require.Equal(t, exitOK, status)
	require.Equal(t, "DENIED\n", out)

	// Another program is refused before it runs.
	out, _, status = ptcx(t, "return 1", "run", "--no-builtin", "--tools", toolsFile, "--plan", approved, "-")
	require.Equal(t, exitTool, status)
	require.Contains(t, out, "DENIED: run_code: the plan ")

	// Dynamic, with why.
	out, _, status = ptcx(t, "const t = tools\nreturn t", "plan", "--no-builtin", "--tools", toolsFile, "-")
	require.Equal(t, exitOK, status)
	require.Contains(t, out, "dynamic: the program reaches tools in ways the reader cannot follow, so it may call any of: fail, lookup, save\n  line 1: tools is used")

	// A program that cannot run, a bad plan document, usage.
	out, _, status = ptcx(t, "return (", "plan", "--no-builtin", "-")
	require.Equal(t, exitTool, status)
	require.Contains(t, out, "CODE_RUN_FAILED")
	require.NoError(t, os.WriteFile(approved, []byte(`{"hash": "x", "extra": 1}`), 0o644))
	_, errOut, status = ptcx(t, "return 1", "run", "--no-builtin", "--plan", approved, "-")
	require.NotEqual(t, exitOK, status)
	require.Contains(t, errOut, "not a plan document")
	_, _, status = ptcx(t, "", "plan", "--no-builtin")
	require.Equal(t, exitUsage, status)
}

// readPlan reads one plan document of at most maxPlanFileBytes: at the
// bound (padded with JSON's whitespace) it reads, one byte past it is
// refused before decoding, and anything after the object is refused.
func TestReadPlan_bounds(t *testing.T) {
	dir := t.TempDir()
	doc := `{"hash": "` + strings.Repeat("a", 64) + `", "dynamic": false, "tools": ["lookup"], "calls": []}`
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	p, err := readPlan(write("at", doc+strings.Repeat(" ", maxPlanFileBytes-len(doc))))
	require.NoError(t, err)
	require.Equal(t, []string{"lookup"}, p.Tools)
	_, err = readPlan(write("past", doc+strings.Repeat(" ", maxPlanFileBytes-len(doc)+1)))
	require.ErrorContains(t, err, fmt.Sprintf("over %d bytes", maxPlanFileBytes))
	_, err = readPlan(write("two", doc+doc))
	require.ErrorContains(t, err, "more after its JSON object")
	_, err = readPlan(write("trailing", doc+" x"))
	require.ErrorContains(t, err, "not a plan document")
	_, err = readPlan(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestPlan_labelsRulesCost: with declarations in the tools file, ptcx plan
// shows each call's label bound and what its tool's accepts may do, the
// tools' rules and the cost bound, and --json carries them.
func TestPlan_labelsRulesCost(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.ts")
	require.NoError(t, os.WriteFile(prog, []byte(planProgram), 0o644))
	b, err := os.ReadFile(toolsFile)
	require.NoError(t, err)
	var file map[string]any
	require.NoError(t, json.Unmarshal(b, &file))
	for _, tool := range file["tools"].([]any) {
		m := tool.(map[string]any)
		switch m["name"] {
		case "lookup":
			m["labels"] = map[string]any{"integrity": "untrusted"}
			m["cost"] = 2
		case "save":
			m["accepts"] = map[string]any{"integrity": "trusted"}
			m["constraints"] = []any{`args.key != ""`}
			m["cost"] = 3
		}
		if cmd, ok := m["command"].([]any); ok { // relative to the tools file
			for i, a := range cmd {
				if s, ok := a.(string); ok && strings.HasPrefix(s, ".") {
					abs, _ := filepath.Abs(filepath.Join(filepath.Dir(toolsFile), s))
					cmd[i] = abs
				}
			}
		}
	}
	declared := filepath.Join(dir, "tools.json")
	b, _ = json.Marshal(file)
	require.NoError(t, os.WriteFile(declared, b, 0o644))

	out, errOut, status := ptcx(t, "", "plan", "--tools", declared, "--no-builtin", prog)
	require.Equal(t, exitOK, status, errOut)
	require.Contains(t, out, `  line 1  lookup({key: "x"})  once  carries at most trusted, public`+"\n")
	require.Contains(t, out, `  line 3  save({key: "k", text: (computed)})  once  carries at most untrusted, public  may be DENIED (past what the tool accepts)`)
	require.Contains(t, out, "its data: at most untrusted, public\ncost: at most 5\n")
	require.Contains(t, out, "  lookup: results untrusted, public; cost 2\n")
	require.Contains(t, out, `  save: accepts trusted, secret (else deny); constraint "args.key != \"\""; cost 3`)

	out, _, status = ptcx(t, "", "plan", "--json", "--tools", declared, "--no-builtin", prog)
	require.Equal(t, exitOK, status)
	var p struct {
		Cost  int64
		Calls []struct {
			MayDeny bool `json:"may_deny"`
		}
		Rules map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Equal(t, int64(5), p.Cost)
	require.True(t, p.Calls[1].MayDeny)
	require.Contains(t, p.Rules, "save")
}
