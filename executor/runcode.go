package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/text"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/transpile"
	"github.com/ptcx/ptcx/wasmhost"
)

// RunCodeValue is the value of a successful run_code call.
type RunCodeValue struct {
	Logs   []string        `json:"logs"`
	Result json.RawMessage `json:"result,omitempty"`
}

// noOutput is the text of a run that logged nothing and returned nothing. It
// is not the program's output, and does not count against the output limit.
const noOutput = "(run_code completed with no output)"

// runCode is run_code's body: strip the types, run the program in the
// sandbox with a fresh parent token, settle its nested calls, and shape the
// result.
func (e *Executor) runCode(ctx context.Context, x *execution) (api.Output, error) {
	if e.cfg.runtime == nil {
		return api.Output{}, internal("run_code is not available: this executor has no code runtime (Config.WithRuntime)", nil)
	}
	a := runCodeArgsOf(x.args)
	prog, err := transpile.Strip(a.Code)
	if err != nil {
		return api.Output{}, syntaxFailure(err)
	}
	limits := a.limits(e.limits)
	bindable, err := e.reg.Bindable(x.req.Scope)
	if err != nil {
		return api.Output{}, internal("run_code", err)
	}
	names := make([]string, len(bindable))
	for i, b := range bindable {
		names[i] = b.Name
	}

	tok := e.mintToken(x.req.ID, x.req.Scope)
	// Nested calls end with the run's wall time at the latest, as the
	// program does: in-flight calls are awaited at settlement, but not
	// past it (plus their cancellation grace).
	nestedCtx, cancel := context.WithTimeout(ctx, limits.WallTime)
	defer cancel()
	s := newScheduler(nestedCtx, e, tok)
	out, runErr := e.cfg.runtime.Run(ctx, wasmhost.Program{JS: prog.JS, Tools: names, Limits: limits, World: x.req.World}, s)
	if len(e.cfg.onResult) > 0 {
		x.run.Store(&RunInfo{Tools: names, Limits: limits, World: x.req.World, Stats: out.Stats})
	}
	if runErr != nil {
		// The program failed: nobody will see what calls still in flight
		// return, so they are cancelled rather than awaited.
		cancel()
	}
	s.settle()
	tok.kill()

	if runErr != nil {
		return api.Output{}, runFailure(runErr, prog)
	}
	text := noOutput
	if len(out.Logs) > 0 || len(out.Result) > 0 {
		t := runCodeText(out.Logs, out.Result, limits.OutputBytes)
		if t.Over() {
			return api.Output{}, &api.Error{
				Code: api.CodeCodeRunFailed, Kind: api.KindOutputLimit,
				Message: fmt.Sprintf("the output is %d bytes, over the limit of %d; return less, or summarise before returning. The output began:\n%s",
					t.Size(), limits.OutputBytes, t.String()),
				Logs: out.Logs,
			}
		}
		text = t.String()
	}
	v := RunCodeValue{Logs: out.Logs, Result: out.Result}
	if v.Logs == nil {
		v.Logs = []string{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return api.Output{}, internal("run_code result", err)
	}
	return api.Output{Value: b, Text: text}, nil
}

// runCodeText is what the model sees: the logs, then the result (a string
// raw, anything else as indented JSON), one per line, built within limit:
// past it, the text is only counted, so a result that nests deep costs the
// host the limit, not the size of its indented form.
func runCodeText(logs []string, result json.RawMessage, limit int) *registry.Text {
	t := registry.NewText(limit)
	for i, l := range logs {
		if i > 0 {
			t.WriteString("\n")
		}
		t.WriteString(l)
	}
	if len(result) > 0 {
		if len(logs) > 0 {
			t.WriteString("\n")
		}
		t.WriteValue(result)
	}
	return t
}

func syntaxFailure(err error) *api.Error {
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
	msg := fmt.Sprintf("line %d, column %d: %s", se.Line, se.Column, se.Message)
	if loc.LineText != "" {
		msg += "\n  " + loc.LineText
	}
	return &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindSyntax, Message: msg, Location: loc, Cause: err}
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
	var re *api.Error
	if errors.As(o.err, &re) {
		logs = re.Logs
	} else if len(o.out.Value) > 0 {
		var v RunCodeValue
		if json.Unmarshal(o.out.Value, &v) == nil && len(v.Logs) > 0 { // run_code's own value
			logs = v.Logs
		}
	}
	var b strings.Builder
	b.WriteString("the run was cancelled")
	writeLogs(&b, logs)
	return &api.Error{Code: api.CodeCodeRunFailed, Kind: api.KindAbort, Message: b.String(), Logs: logs,
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
