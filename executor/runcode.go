package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/transpile"
	"github.com/ptcx/ptcx/wasmhost"
)

// runCodeArgs are run_code's arguments (already validated by its schema).
type runCodeArgs struct {
	Code        string `json:"code"`
	Description string `json:"description"`
	Limits      struct {
		TimeoutMS   int64 `json:"timeout_ms"`
		WallMS      int64 `json:"wall_ms"`
		MemoryMB    int64 `json:"memory_mb"`
		OutputBytes int   `json:"output_bytes"`
		MaxCalls    int   `json:"max_calls"`
	} `json:"limits"`
}

// limits returns the caller's limits within the deployment's.
func (a runCodeArgs) limits(ceiling wasmhost.Limits) wasmhost.Limits {
	l := a.Limits
	return wasmhost.Limits{
		ComputeTime: time.Duration(scaled(l.TimeoutMS, int64(time.Millisecond))),
		WallTime:    time.Duration(scaled(l.WallMS, int64(time.Millisecond))),
		MemoryBytes: scaled(l.MemoryMB, 1<<20),
		OutputBytes: l.OutputBytes,
		MaxCalls:    l.MaxCalls,
	}.Within(ceiling)
}

// scaled is v*unit, saturating instead of overflowing: a caller asking for
// an absurdly high limit gets the ceiling, not a negative limit.
func scaled(v, unit int64) int64 {
	if v > math.MaxInt64/unit {
		return math.MaxInt64
	}
	return v * unit
}

// RunCodeValue is the value of a successful run_code call.
type RunCodeValue struct {
	Logs   []string        `json:"logs"`
	Result json.RawMessage `json:"result,omitempty"`
}

// noOutput is the text of a run that logged nothing and returned nothing.
const noOutput = "(run_code completed with no output)"

// runCode is run_code's body: strip the types, run the program in the
// sandbox with a fresh parent token, settle its nested calls, and shape the
// result.
func (e *Executor) runCode(ctx context.Context, x *execution) (registry.Output, error) {
	if e.cfg.runtime == nil {
		return registry.Output{}, internal("run_code is not available: this executor has no code runtime (Config.WithRuntime)", nil)
	}
	var a runCodeArgs
	if err := json.Unmarshal(x.req.Args, &a); err != nil {
		return registry.Output{}, &registry.Error{Code: registry.CodeInvalidArgs, Message: "invalid arguments for run_code: " + err.Error(), Cause: err}
	}
	prog, err := transpile.Strip(a.Code)
	if err != nil {
		return registry.Output{}, syntaxFailure(err)
	}
	limits := a.limits(e.limits)
	bindable, err := e.reg.Bindable(x.req.Scope)
	if err != nil {
		return registry.Output{}, internal("run_code", err)
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
	out, runErr := e.cfg.runtime.Run(ctx, wasmhost.Program{JS: prog.JS, Tools: names, Limits: limits}, s)
	if runErr != nil {
		// The program failed: nobody will see what calls still in flight
		// return, so they are cancelled rather than awaited.
		cancel()
	}
	s.settle()
	tok.kill()

	if runErr != nil {
		return registry.Output{}, runFailure(runErr, prog)
	}
	text := runCodeText(out.Logs, out.Result)
	if len(text) > limits.OutputBytes {
		return registry.Output{}, &registry.Error{
			Code: registry.CodeCodeRunFailed, Kind: string(wasmhost.KindOutputLimit),
			Message: fmt.Sprintf("run_code failed (output-limit): the output is %d bytes, over the limit of %d; return less, or summarise before returning. The output began:\n%s",
				len(text), limits.OutputBytes, truncateUTF8(text, limits.OutputBytes)),
			Logs: out.Logs,
		}
	}
	v := RunCodeValue{Logs: out.Logs, Result: out.Result}
	if v.Logs == nil {
		v.Logs = []string{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return registry.Output{}, internal("run_code result", err)
	}
	return registry.Output{Value: b, Text: text}, nil
}

// runCodeText is what the model sees: the logs, then the result (a string
// raw, anything else as indented JSON).
func runCodeText(logs []string, result json.RawMessage) string {
	parts := append([]string(nil), logs...)
	if len(result) > 0 {
		parts = append(parts, registry.RenderText(result))
	}
	if len(parts) == 0 {
		return noOutput
	}
	return strings.Join(parts, "\n")
}

func syntaxFailure(err error) *registry.Error {
	var se *transpile.SyntaxError
	if !errors.As(err, &se) {
		return internal("run_code: transpiling failed", err)
	}
	msg := fmt.Sprintf("run_code failed (syntax): line %d, column %d: %s", se.Line, se.Column, se.Message)
	if se.LineText != "" {
		msg += "\n  " + se.LineText
	}
	return &registry.Error{Code: registry.CodeCodeRunFailed, Kind: string(wasmhost.KindSyntax), Message: msg, Cause: err}
}

// runFailure turns a sandbox failure into CODE_RUN_FAILED with its kind, the
// JavaScript stack and the logs written before it. Positions in the stack
// and of a syntax error are mapped back to the TypeScript as the caller
// wrote it.
func runFailure(err error, prog *transpile.Program) *registry.Error {
	var re *wasmhost.RunError
	if !errors.As(err, &re) {
		return internal("run_code: the sandbox failed", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run_code failed (%s): %s", re.Kind, re.Message)
	if re.Kind == wasmhost.KindSyntax && re.Line > 0 {
		line, col := re.Line, re.Column
		if l, c, ok := prog.Locate(line, col); ok {
			line, col = l, c
		}
		fmt.Fprintf(&b, " (line %d, column %d)", line, col)
	}
	if re.Stack != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(mapStack(re.Stack, prog), "\n"))
	}
	if len(re.Logs) > 0 {
		b.WriteString("\nLogs before the failure:\n")
		b.WriteString(strings.Join(re.Logs, "\n"))
	}
	return &registry.Error{Code: registry.CodeCodeRunFailed, Kind: string(re.Kind), Message: b.String(), Logs: re.Logs, Cause: err}
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

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
