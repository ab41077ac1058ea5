package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

var callCommand = command{
	name:  "call",
	brief: "execute one model-direct tool call, print its result as JSON",
	summary: "Execute one model-direct tool call and print its result as one JSON object.\nARGS_JSON defaults to {}; - reads it from stdin. Exit status: 0 ok, 1 the call failed, 2 usage.\n" +
		"A call that asks for approval (a tool declared needs_approval, a data-flow rule with on_violation ask)\n" +
		"is put to you on the terminal (y/N) when stdin and stderr are one, as in ptcx run; --approve-all or\n" +
		"--deny-all decide without asking, and without a terminal or either flag such a call is denied.",
	usage: "call [--tools FILE] [--mode native|ptc|both] [--scope NAME] [--approve-all|--deny-all] NAME [ARGS_JSON|-]",
	run:   runCall,
}

// callOutput is what `ptcx call` prints.
type callOutput struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Text  string          `json:"text,omitempty"`
	Error *callError      `json:"error,omitempty"`
	// Labels is where the result's data came from (docs/security.md,
	// "Data flow"); absent when it is the lowest (trusted, public), as in
	// the ledger, so a host that declares no labels prints what it did.
	Labels api.Label `json:"labels,omitzero"`
	// Ledger is what a run_code program did: its nested calls and stats.
	Ledger *api.Ledger `json:"ledger,omitempty"`
	// Handles are the handles a run_code result holds, with their values:
	// the model is shown placeholders (text, value); the host reads them
	// here (docs/security.md, "Handles").
	Handles []handleOutput `json:"handles,omitempty"`
}

// handleOutput is a handle with its value, as ptcx call and ptcx run
// --json print it.
type handleOutput struct {
	api.Handle
	Value json.RawMessage `json:"value"`
}

type callError struct {
	Code       api.Code      `json:"code"`
	Kind       api.Kind      `json:"kind,omitempty"`
	Message    string        `json:"message"`
	Violations []string      `json:"violations,omitempty"`
	Location   *api.Location `json:"location,omitempty"`
	Stack      string        `json:"stack,omitempty"`
	Logs       []string      `json:"logs,omitempty"`
	// Policy is the flow a data-flow rule refused the call for.
	Policy *api.PolicyViolation `json:"policy,omitempty"`
}

func runCall(ctx context.Context, c command, s *stdio, args []string) int {
	var st setup
	fs := newFlags(c, s)
	st.flags(fs, true)
	var af approvalFlags
	af.register(fs, true)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError(fs, s, "want a tool NAME and optional ARGS_JSON, got %d arguments", len(pos))
	}
	approver, err := af.approver(s, "ptcx call", true)
	if err != nil {
		return usageError(fs, s, "%v", err)
	}
	raw := []byte("{}")
	if len(pos) == 2 {
		raw = []byte(pos[1])
		if pos[1] == "-" {
			b, err := io.ReadAll(s.in)
			if err != nil {
				return fail(s, err)
			}
			raw = b
		}
	}
	e, err := st.build(ctx, executor.NewConfig().WithApprover(approver))
	if err != nil {
		return setupFailed(fs, s, err)
	}
	defer e.close()
	r := e.exec.Execute(ctx, executor.Call{Scope: e.scope, Name: pos[0], Args: raw})
	return printResult(s, r)
}

// printResult prints a result as `ptcx call` does and returns its status.
func printResult(s *stdio, r api.Result) int {
	out := callOutput{OK: r.OK(), Ledger: r.Ledger, Labels: r.Labels}
	for _, h := range r.Handles {
		out.Handles = append(out.Handles, handleOutput{Handle: h, Value: h.Value})
	}
	if r.OK() {
		out.Value, out.Text = r.Value, r.Text
	} else {
		out.Error = &callError{Code: r.Err.Code, Kind: r.Err.Kind, Message: r.Err.Message, Violations: r.Err.Violations,
			Location: r.Err.Location, Stack: r.Err.Stack, Logs: r.Err.Logs, Policy: r.Err.Policy}
	}
	if err := writeJSON(s, out, false); err != nil {
		return fail(s, err)
	}
	if !r.OK() {
		return exitTool
	}
	return exitOK
}

// setupFailed reports a build error: a usage error (bad flag value) gets
// exit status 2 and a pointer to --help; anything else 1.
func setupFailed(fs *flag.FlagSet, s *stdio, err error) int {
	var u usage
	if errors.As(err, &u) {
		fail(s, err)
		seeHelp(fs)
		return exitUsage
	}
	return fail(s, err)
}
