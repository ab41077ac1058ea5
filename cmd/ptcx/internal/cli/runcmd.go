package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/registry"
)

var runCommand = command{
	name:  "run",
	brief: "run a TypeScript or Python program as one run_code call",
	summary: "Run a TypeScript or Python program as one run_code call and print what the model would see\n" +
		"(or the whole result as JSON with --json). FILE - reads the program from stdin.\n" +
		"A FILE ending in .py is Python (or say --language), which this enables: it needs the Python guest (make guest-python).\n" +
		"With --plan, only the program the plan was read from runs, and only the calls it allows (ptcx plan).\n" +
		"A call that asks for approval (a tool declared needs_approval, a data-flow rule with on_violation ask)\n" +
		"is put to you on the terminal (y/N) when stdin and stderr are one; --approve-all or --deny-all decide\n" +
		"without asking, and without a terminal or either flag such a call is denied.\n" +
		"The mode defaults to ptc. Exit status: 0 ok, 1 the run failed, 2 usage.",
	usage: "run [--tools FILE] [--mode ptc|both] [--scope NAME] [--upstream [NAME=]CMD]... [--json] [--wall D] [--compute D] [--memory MB] [--seed N] [--trace FILE] [--plan PLAN.json] [--approve-all|--deny-all] [--languages LIST] [--language typescript|python] FILE.ts|FILE.py|-",
	run:   runRun,
}

func runRun(ctx context.Context, c command, s *stdio, args []string) int {
	st := setup{defaultMode: api.ModePTC}
	fs := newFlags(c, s)
	st.flags(fs, true)
	asJSON := fs.Bool("json", false, "print the whole result as one JSON object, as ptcx call does")
	wall := fs.Duration("wall", 0, "the program's wall-time `LIMIT` (run_code's limits.wall_ms), e.g. 30s (default and ceiling: "+shortDuration(api.DefaultWallTime)+")")
	compute := fs.Duration("compute", 0, "the program's compute-time `LIMIT` (run_code's limits.timeout_ms), e.g. 5s (default and ceiling: "+shortDuration(api.DefaultComputeTime)+")")
	memory := fs.Int("memory", 0, fmt.Sprintf("the program's memory limit in `MB` (default and ceiling: %d)", api.DefaultMemoryBytes>>20))
	language := fs.String("language", "", "the program's `LANGUAGE`: typescript or python (default: python for a FILE ending in .py, else typescript); python is enabled whatever --languages says")
	planFile := fs.String("plan", "", "run the program bound to the approved plan in `PLAN.json` (ptcx plan --json, with tools or calls removed)")
	var ef evalFlags
	ef.register(fs)
	var af approvalFlags
	af.register(fs, true)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(fs, s, "want one program FILE (or - for stdin), got %d arguments", len(pos))
	}
	approver, err := af.approver(s, "ptcx run", true)
	if err != nil {
		return usageError(fs, s, "%v", err)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--wall", *wall}, {"--compute", *compute}} {
		if d.v < 0 || (d.v > 0 && d.v < time.Millisecond) {
			return usageError(fs, s, "%s %v: want a positive duration of at least 1ms", d.name, d.v)
		}
	}
	if *memory < 0 {
		return usageError(fs, s, "--memory %d: want a positive number of MB", *memory)
	}
	lang, err := programLanguage(*language, pos[0])
	if err != nil {
		return usageError(fs, s, "%v", err)
	}
	st.withPython = lang == api.LanguagePython
	program, name, err := readProgram(s, pos[0])
	if err != nil {
		return fail(s, err)
	}
	var approved *plan.Plan
	if *planFile != "" {
		if approved, err = readPlan(*planFile); err != nil {
			return fail(s, err)
		}
	}
	closeTrace, err := ef.open(ctx, s, "run", &st, false)
	if err != nil {
		return fail(s, err)
	}
	e, err := st.build(ctx, executor.NewConfig().WithApprover(approver))
	if err != nil {
		_ = closeTrace()
		return setupFailed(fs, s, err)
	}
	defer e.close()
	if err := e.needsRunCode(); err != nil {
		return fail(s, err)
	}

	limits := map[string]any{}
	if *wall > 0 {
		limits["wall_ms"] = wall.Milliseconds()
	}
	if *compute > 0 {
		limits["timeout_ms"] = compute.Milliseconds()
	}
	if *memory > 0 {
		limits["memory_mb"] = *memory
	}
	callArgs := map[string]any{"code": program, "description": "ptcx run " + name}
	if lang != api.LanguageTypeScript {
		callArgs["language"] = lang
	}
	if len(limits) > 0 {
		callArgs["limits"] = limits
	}
	raw, err := json.Marshal(callArgs)
	if err != nil {
		return fail(s, err)
	}
	r := e.exec.Execute(ctx, executor.Call{Scope: e.scope, Name: registry.RunCode, Args: raw, Plan: approved})
	if err := closeTrace(); err != nil {
		return fail(s, err)
	}
	if *asJSON {
		return printResult(s, r)
	}
	if !r.OK() {
		fmt.Fprintln(s.out, r.Err.Prefix()+": "+r.Text)
		return exitTool
	}
	fmt.Fprintln(s.out, r.Text)
	return exitOK
}

// programLanguage is the language of ptcx run's program: --language's,
// else python for a file ending in .py, else typescript.
func programLanguage(flagValue, path string) (api.Language, error) {
	if flagValue != "" {
		l, err := api.ParseLanguage(flagValue)
		if err != nil {
			return "", fmt.Errorf("--language %q: the languages are %s", flagValue, api.JoinLanguages(api.Languages))
		}
		return l, nil
	}
	if strings.HasSuffix(path, ".py") {
		return api.LanguagePython, nil
	}
	return api.LanguageTypeScript, nil
}

func readProgram(s *stdio, path string) (program, name string, err error) {
	if path == "-" {
		b, err := io.ReadAll(s.in)
		return string(b), "(stdin)", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	return string(b), path, nil
}

// shortDuration writes d as a flag's default is written: "10m", "30s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}
