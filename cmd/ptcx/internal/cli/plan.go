package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/plan"
)

var planCommand = command{
	name:  "plan",
	brief: "read a program without running it: the tool calls it can make",
	summary: "Read a TypeScript program without running it and print what it can do: every call site of a tool,\n" +
		"its literal arguments, whether it can run more than once, and whether the program reaches tools in a way\n" +
		"no reader can follow (dynamic: it may then call any tool). --json prints the plan document, which\n" +
		"ptcx run --plan takes once a person has approved it (removing tools or calls). FILE - reads stdin.\n" +
		"Exit status: 0 ok, 1 the program cannot run (syntax, size), 2 usage.",
	usage: "plan [--tools FILE] [--mode ptc|both] [--scope NAME] [--upstream [NAME=]CMD]... [--json] FILE.ts|-",
	run:   runPlan,
}

func runPlan(ctx context.Context, c command, s *stdio, args []string) int {
	st := setup{defaultMode: api.ModePTC}
	fs := newFlags(c, s)
	st.flags(fs, true)
	asJSON := fs.Bool("json", false, "print the plan as JSON (the document ptcx run --plan takes)")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(fs, s, "want one program FILE (or - for stdin), got %d arguments", len(pos))
	}
	program, name, err := readProgram(s, pos[0])
	if err != nil {
		return fail(s, err)
	}
	e, err := st.build(ctx, executor.NewConfig())
	if err != nil {
		return setupFailed(fs, s, err)
	}
	defer e.close()
	p, err := e.exec.Plan(e.scope, program)
	if err != nil {
		fmt.Fprintf(s.out, "%s: %v\n", name, err)
		return exitTool
	}
	if *asJSON {
		if err := writeJSON(s, p, true); err != nil {
			return fail(s, err)
		}
		return exitOK
	}
	fmt.Fprint(s.out, describePlan(name, p))
	return exitOK
}

// describePlan is a plan for a person to read.
func describePlan(name string, p *plan.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (sha256 %s)\n", name, p.Hash)
	if p.Dynamic {
		fmt.Fprintf(&b, "dynamic: the program reaches tools in ways the reader cannot follow, so it may call any of: %s\n", orNone(p.Tools))
		for _, r := range p.Reasons {
			fmt.Fprintf(&b, "  line %d: %s\n", r.Line, r.Why)
		}
	} else {
		fmt.Fprintf(&b, "tools: %s\n", orNone(p.Tools))
	}
	if len(p.Calls) == 0 {
		if !p.Dynamic {
			b.WriteString("no tool calls\n")
		}
		return b.String()
	}
	b.WriteString("calls:\n")
	for _, c := range p.Calls {
		var parts []string
		for _, k := range sortedKeys(c.Args) {
			parts = append(parts, k+": "+string(c.Args[k]))
		}
		for _, k := range c.Computed {
			if k == plan.Opaque {
				parts = append(parts, "…")
				continue
			}
			parts = append(parts, k+": (computed)")
		}
		times := "once"
		if c.Repeats {
			times = "repeats"
		}
		fmt.Fprintf(&b, "  line %d  %s({%s})  %s%s\n", c.Line, c.Tool, strings.Join(parts, ", "), times, callFlow(c))
	}
	describeRules(&b, p)
	return b.String()
}

// callFlow is what a call site can carry, and what its tool's accepts may
// do with it.
func callFlow(c plan.Call) string {
	if c.Labels == nil {
		return ""
	}
	s := "  carries at most " + c.Labels.String()
	switch {
	case c.MayDeny && c.MayAsk:
		s += "  may be denied or asked (the tool's declaration is unknown)"
	case c.MayDeny:
		s += "  may be DENIED (past what the tool accepts)"
	case c.MayAsk:
		s += "  may ask approval (past what the tool accepts)"
	}
	return s
}

// describeRules prints the rules each tool declares, the program's label
// bound and its cost bound.
func describeRules(b *strings.Builder, p *plan.Plan) {
	if p.Labels == nil {
		return
	}
	fmt.Fprintf(b, "its data: at most %s\n", p.Labels)
	if p.Cost != nil {
		fmt.Fprintf(b, "cost: at most %d\n", *p.Cost)
	} else {
		b.WriteString("cost: no bound (a call with a cost repeats, a tool is unknown, or the plan is dynamic)\n")
	}
	var lines []string
	for _, t := range p.Tools {
		r, ok := p.Rules[t]
		if !ok {
			lines = append(lines, fmt.Sprintf("  %s: declaration unknown", t))
			continue
		}
		if rs := ruleList(r); rs != "" {
			lines = append(lines, fmt.Sprintf("  %s: %s", t, rs))
		}
	}
	if len(lines) > 0 {
		b.WriteString("rules:\n" + strings.Join(lines, "\n") + "\n")
	}
}

func ruleList(r plan.Rules) string {
	var parts []string
	if r.Labels != nil {
		parts = append(parts, "results "+r.Labels.String())
	}
	if r.Accepts != nil || len(r.AcceptsArgs) > 0 {
		a := "accepts"
		if r.Accepts != nil {
			a += " " + r.Accepts.String()
		}
		for _, k := range slices.Sorted(maps.Keys(r.AcceptsArgs)) {
			a += fmt.Sprintf(" %s≤%s", k, r.AcceptsArgs[k])
		}
		parts = append(parts, a+" (else "+r.OnViolation+")")
	}
	if r.NeedsApproval {
		parts = append(parts, "needs approval")
	}
	for _, c := range r.Constraints {
		parts = append(parts, "constraint "+strconv.Quote(c))
	}
	if r.CallsPerRun > 0 {
		parts = append(parts, fmt.Sprintf("at most %d call(s) per run", r.CallsPerRun))
	}
	if r.Cost > 0 {
		parts = append(parts, fmt.Sprintf("cost %d", r.Cost))
	}
	if r.MaxCost > 0 {
		parts = append(parts, fmt.Sprintf("max cost %d", r.MaxCost))
	}
	return strings.Join(parts, "; ")
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

func sortedKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// maxPlanFileBytes bounds a plan document --plan reads: a plan lists the
// call sites of a program of at most api.MaxCodeBytes, each with its
// literal arguments, so it is the program's size with some JSON around it.
const maxPlanFileBytes = 16 * api.MaxCodeBytes

// readPlan reads an approved plan document (ptcx plan --json, edited): one
// JSON object of a plan's members, nothing after it, at most
// maxPlanFileBytes.
func readPlan(path string) (*plan.Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPlanFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxPlanFileBytes {
		return nil, fmt.Errorf("--plan %s: over %d bytes, more than a plan of the largest program", path, maxPlanFileBytes)
	}
	var p plan.Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("--plan %s: not a plan document: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("--plan %s: not a plan document: more after its JSON object", path)
	}
	if p.Hash == "" {
		return nil, fmt.Errorf("--plan %s: the plan has no hash", path)
	}
	return &p, nil
}
