package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/shape"
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/transpile"
	"github.com/ptcx/ptcx/wasmhost"
)

// RunCodeValue is the value of a successful run_code call: the whole
// output (within the hard cap, api.Limits.OutputBytes), whatever the model
// was shown of it. The run's ledger is beside it (api.Result.Ledger).
type RunCodeValue struct {
	Logs   []string        `json:"logs"`
	Result json.RawMessage `json:"result,omitempty"`
}

// noOutput is the text of a run that logged nothing and returned nothing. It
// is not the program's output, and does not count against the output limit.
const noOutput = "(run_code completed with no output)"

// runCode is run_code's body: strip the types, run the program in the
// sandbox with a fresh parent token (and, for a large tool set, its
// catalog: catalog.go), settle its nested calls, and shape the
// result: the model is shown at most the model budget of it
// (internal/shape), the host gets it whole with the run's ledger.
func (e *Executor) runCode(ctx context.Context, x *execution) (api.Output, error) {
	if e.cfg.runtime == nil {
		return api.Output{}, internal("run_code is not available: this executor has no code runtime (Config.WithRuntime)", nil)
	}
	a := runCodeArgsOf(x.args)
	prog, err := programOf(a)
	if err != nil {
		return api.Output{}, syntaxFailure(err, a.Code)
	}
	limits := a.limits(e.limits)
	if perr := a.checkLanguage(x, limits); perr != nil {
		return api.Output{}, perr
	}
	bindable, err := e.reg.Bindable(x.req.Scope)
	if err != nil {
		return api.Output{}, internal("run_code", err)
	}
	names := make([]string, len(bindable))
	for i, b := range bindable {
		names[i] = b.Name
	}
	catalog, err := catalogFor(bindable)
	if err != nil {
		return api.Output{}, internal("run_code: the tool catalog", err)
	}

	bound, perr := x.bindPlan(a.Code, names) // plan.go
	if perr != nil {
		return api.Output{}, perr
	}
	c := &codeRun{x: x, prog: prog, lang: a.Language, names: names, catalog: catalog, limits: limits, tok: e.mintToken(x.req.ID, x.req.Scope), start: time.Now(),
		park: parkingOf(ctx)}
	c.tok.plan = bound
	c.tok.session = x.session != ""
	if x.session != "" {
		return e.runInSession(ctx, c) // session_run.go
	}
	return e.runProgram(ctx, c, func(p wasmhost.Program, s *scheduler) (wasmhost.Outcome, error) {
		p.JS = prog.JS
		return e.cfg.runtime.Run(ctx, p, s)
	})
}

// codeRun is one run_code program, from its start to its end, parked or
// not (park.go) on the way.
type codeRun struct {
	x       *execution
	prog    *transpile.Program
	lang    api.Language // canonical
	names   []string
	catalog string // the large tool set's catalog (catalog.go), or ""
	limits  api.Limits
	tok     *token
	start   time.Time     // of the program, less the time it was parked
	elapsed time.Duration // the program's wall time before it was last parked
	park    *parking      // nil unless the caller may park it
	// Its idle parks (idlepark.go): how many, and how long in all.
	idleParks  int
	idleParked time.Duration
}

// runProgram runs (or resumes) c's program with run, settles its nested
// calls, kills the token and shapes the result. A parked program keeps its
// token: its nested calls are still its own when it resumes.
func (e *Executor) runProgram(ctx context.Context, c *codeRun, run func(wasmhost.Program, *scheduler) (wasmhost.Outcome, error)) (api.Output, error) {
	x, prog, names, limits, tok := c.x, c.prog, c.names, c.limits, c.tok
	// Nested calls end with the run's wall time at the latest, as the
	// program does: in-flight calls are awaited at settlement, but not
	// past it (plus their cancellation grace).
	// The program ends at the same instant (Program.Deadline).
	deadline := time.Now().Add(limits.WallTime - c.elapsed)
	nestedCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	s := newScheduler(nestedCtx, e, tok)
	s.outlive = c.idleGrace() > 0
	start := c.start
	p := wasmhost.Program{Language: c.lang, Tools: names, Catalog: c.catalog, LexicalTools: tok.plan != nil, Limits: limits, Deadline: deadline, World: x.req.World, Tenant: e.cfg.tenant,
		Suspend: c.suspendWhen(), SuspendIdle: c.idleGrace()}
	if c.park != nil {
		// Its nested calls may be held for an approval (park_approval.go).
		c.park.recheck = make(chan struct{}, 1)
		p.Recheck = c.park.recheck
		defer func() { c.park.recheck = nil }()
	}
	out, runErr := run(p, s)
	// Idle parks are resumed here: the scheduler stays with the run and
	// serves the resumed run's calls (idlepark.go).
	out, runErr = c.resumeIdle(ctx, p, s, out, runErr)
	if len(e.cfg.onResult) > 0 {
		ri := &RunInfo{Tools: names, Limits: limits, World: x.req.World, Stats: out.Stats,
			IdleParks: c.idleParks, IdleParked: c.idleParked, HandleOver: e.cfg.handleOver}
		if tok.plan != nil {
			ri.Plan = tok.plan.Plan()
		}
		x.run.Store(ri)
	}
	if runErr != nil {
		// The program failed: nobody will see what calls still in flight
		// return, so they are cancelled rather than awaited.
		cancel()
	}
	s.settle()
	x.runLabel = tok.flow.context() // every result delivered into the program (flow.go)
	if runErr == nil && out.Suspended != nil {
		return c.parked(out)
	}
	if c.park != nil {
		c.park.abandonAsks(nestedCtx)
	}
	tok.kill()

	if runErr != nil {
		f := runFailure(runErr, prog)
		if f.Code == api.CodeCodeRunFailed {
			f.Ledger = tok.ledger.report(out.Stats, time.Since(start))
			f.Message += failureText(f.Ledger)
		}
		return api.Output{}, f
	}
	ledger := tok.ledger.report(out.Stats, 0)
	var held []api.Handle
	if t := tok.handles.Load(); t != nil { // handles in the result: placeholders for the model (handles.go)
		out.Result, held = t.placeholders(out.Result)
	}
	text := noOutput
	if len(out.Logs) > 0 || len(out.Result) > 0 {
		text = shape.Output(out.Logs, out.Result, limits.ModelBytes).Text
	}
	v := RunCodeValue{Logs: out.Logs, Result: out.Result}
	if v.Logs == nil {
		v.Logs = []string{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return api.Output{}, internal("run_code result", err)
	}
	return api.Output{Value: b, Text: text, Ledger: ledger, Handles: held}, nil
}

func syntaxFailure(err error, code string) *api.Error {
	var le *transpile.LimitError
	if errors.As(err, &le) { // the program is over a bound of the host's work for it
		problem := strings.TrimPrefix(le.Error(), "transpile: ")
		return &api.Error{Code: api.CodeInvalidArgs, Message: "invalid arguments for run_code: " + problem, Cause: err,
			Violations: []string{"at /code: " + problem}}
	}
	var se *transpile.SyntaxError
	if !errors.As(err, &se) {
		return internal("run_code: transpiling failed", err)
	}
	loc := &api.Location{Line: se.Line, Column: se.Column, LineText: excerpt(se.LineText, se.Column-1)}
	msg := fmt.Sprintf("line %d, column %d: %s", se.Line, se.Column, syntaxMessage(se, code))
	if loc.LineText != "" {
		msg += "\n  " + loc.LineText
	}
	return &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindSyntax, Message: msg, Location: loc, Cause: err}
}

// moduleSyntax is an import or export statement at the start of a line.
var moduleSyntax = regexp.MustCompile(`^\s*(import|export)(\s|\{|\*|$)`)

// syntaxMessage is what a syntax error says, in terms of the program as
// its author wrote it: the program is the body of a function the host
// wraps it in, whose closing brace a parser reports when the program ends
// too soon or closes one brace too many, and which cannot hold a module's
// statements.
func syntaxMessage(se *transpile.SyntaxError, code string) string {
	if moduleSyntax.MatchString(se.LineText) {
		return "modules are not available: a program cannot import or export; call the bound tools instead (await tools.<name>(args))"
	}
	expected, found := strings.CutSuffix(se.Message, ` but found "}"`)
	if se.Message != `Unexpected "}"` && !(found && strings.HasPrefix(expected, "Expected ")) {
		return se.Message
	}
	lines := strings.Split(code, "\n")
	last := lines[len(lines)-1]
	if se.Line < len(lines) || (se.Line == len(lines) && se.Column <= len(last)) {
		return se.Message // a brace of the program's own
	}
	switch {
	case found:
		return "unexpected end of input: e" + strings.TrimPrefix(expected, "E")
	case strings.Count(code, "}") > strings.Count(code, "{"):
		return `unexpected "}": the program closes a brace it did not open`
	}
	return "unexpected end of input: an expression, a bracket or a string is not finished"
}

// excerptBytes is how much of the line a syntax error shows: a program on
// one very long line is not echoed back whole.
const excerptBytes = 200

// excerpt returns up to excerptBytes of line around the byte offset at,
// cut at character boundaries, with an ellipsis where it was cut.
func excerpt(line string, at int) string {
	if len(line) <= excerptBytes {
		return line
	}
	start := min(max(at-excerptBytes/2, 0), len(line)-excerptBytes)
	end := start + excerptBytes
	start, end = text.Boundary(line, start), text.Boundary(line, end)
	out := line[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(line) {
		out += "…"
	}
	return out
}

// runFailure turns a sandbox failure into CODE_RUN_FAILED with its kind, the
// JavaScript stack and the logs written before it, or into BUSY when the
// sandbox had no room for the run. Positions in the stack and of a syntax
// error are mapped back to the TypeScript as the caller wrote it.
func runFailure(err error, prog *transpile.Program) *api.Error {
	if errors.Is(err, wasmhost.ErrBusy) {
		return busy(err)
	}
	var re *wasmhost.RunError
	if !errors.As(err, &re) {
		return internal("run_code: the sandbox failed", err)
	}
	e := &api.Error{Code: api.CodeCodeRunFailed, Kind: re.Kind, Logs: re.Logs, Cause: err}
	var b strings.Builder
	b.WriteString(re.Message)
	if re.Kind == api.KindSyntax && re.Line > 0 {
		e.Location = &api.Location{Line: re.Line, Column: re.Column}
		if l, c, ok := prog.Locate(re.Line, re.Column); ok {
			e.Location.Line, e.Location.Column = l, c
		}
		fmt.Fprintf(&b, " (line %d, column %d)", e.Location.Line, e.Location.Column)
	}
	if re.Stack != "" {
		e.Stack = strings.TrimRight(mapStack(re.Stack, prog), "\n")
		b.WriteString("\n")
		b.WriteString(e.Stack)
	}
	writeLogs(&b, re.Logs)
	e.Message = b.String()
	return e
}

// writeLogs ends a failure's message with the logs written before it.
func writeLogs(b *strings.Builder, logs []string) {
	if len(logs) > 0 {
		b.WriteString("\nLogs before the failure:\n")
		b.WriteString(strings.Join(logs, "\n"))
	}
}

// abortedRun is the error of a run_code call whose caller cancelled it,
// whatever its body returned as the cancellation came: CODE_RUN_FAILED
// (abort), with the logs of the run when it has them.
func abortedRun(ctx context.Context, o outcome) *api.Error {
	var logs []string
	ledger := o.out.Ledger
	var re *api.Error
	if errors.As(o.err, &re) {
		logs, ledger = re.Logs, re.Ledger
	} else if len(o.out.Value) > 0 {
		var v RunCodeValue
		if json.Unmarshal(o.out.Value, &v) == nil && len(v.Logs) > 0 { // run_code's own value
			logs = v.Logs
		}
	}
	var b strings.Builder
	b.WriteString("the run was cancelled")
	writeLogs(&b, logs)
	if ledger != nil {
		b.WriteString(failureText(ledger))
	}
	return &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindAbort, Message: b.String(), Logs: logs, Ledger: ledger,
		Cause: errors.Join(context.Cause(ctx), o.err)}
}

// stackPosition is a position of the program in a guest stack trace.
var stackPosition = regexp.MustCompile(`<program>:(\d+):(\d+)`)

// mapStack rewrites the program's positions in a stack trace to the
// TypeScript as written; positions with no origin there are kept.
func mapStack(stack string, prog *transpile.Program) string {
	return stackPosition.ReplaceAllStringFunc(stack, func(m string) string {
		sub := stackPosition.FindStringSubmatch(m)
		line, _ := strconv.Atoi(sub[1])
		col, _ := strconv.Atoi(sub[2])
		if l, c, ok := prog.Locate(line, col); ok {
			return fmt.Sprintf("<program>:%d:%d", l, c)
		}
		return m
	})
}
