package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/trace"
)

var replayCommand = command{
	name:  "replay",
	brief: "re-run a trace's programs, nested calls answered from the trace",
	summary: "Re-run the programs of a trace (ptcx run/batch/mcp --trace) with every nested call answered from\n" +
		"the trace: the same seed, the same completion order. Reports, per record, a reproduced outcome or the\n" +
		"first divergence (call index, expected vs got) and what of the outcome differs. With --tools, calls\n" +
		"the trace lacks go to the real tools (\"what if\" runs). A record of a run bound to a plan replays bound to\n" +
		"it; --plan binds the replay to another approved plan (ptcx plan --json) instead, and a call it refuses\n" +
		"that the run made is a divergence (policy: refused by plan). Exit status: 0 every record reproduced,\n" +
		"1 a divergence or a difference, 2 usage.",
	usage: "replay [--id ID] [--json] [--gate-wait D] [--plan PLAN.json] [--tools FILE [--workspace DIR] [--no-builtin] [--allow-bash]] TRACE.jsonl",
	run:   runReplay,
}

// replayLine is one record's report with --json.
type replayLine struct {
	ID          string            `json:"id"`
	OK          bool              `json:"ok"`
	Divergence  *trace.Divergence `json:"divergence,omitempty"`
	Differences []string          `json:"differences,omitempty"`
	Text        string            `json:"text"`
	// Unseeded says the record was made without --seed (unseededNote).
	Unseeded bool `json:"unseeded,omitempty"`
}

// unseededNote follows a failed replay of a record made without a seed:
// its world (Math.random, the clock) was the real one, which no replay
// reproduces.
const unseededNote = "note: this record was made without --seed, so its program saw real randomness and time " +
	"(Math.random, Date): a program that uses them differs on replay; record it again with --seed N to replay it exactly"

func runReplay(ctx context.Context, c command, s *stdio, args []string) int {
	st := setup{}
	fs := newFlags(c, s)
	st.flags(fs, false)
	id := fs.String("id", "", "replay only the record of this call `ID`")
	asJSON := fs.Bool("json", false, "print one JSON object per record")
	gateWait := fs.Duration("gate-wait", trace.DefaultGateWait, "how long a replayed call waits for the call completed before it in the trace (`D`), before it fails")
	planFile := fs.String("plan", "", "replay bound to this approved plan (`PLAN.json`, from ptcx plan --json) instead of the record's")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(fs, s, "want one TRACE file, got %d arguments", len(pos))
	}
	var bound *plan.Plan
	if *planFile != "" {
		var err error
		if bound, err = readPlan(*planFile); err != nil {
			return fail(s, err)
		}
	}
	if err := engineEnvError(st.engine); err != nil {
		return usageError(fs, s, "%v", err)
	}
	if *gateWait < time.Millisecond {
		return usageError(fs, s, "--gate-wait %v: want a duration of at least 1ms", *gateWait)
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return fail(s, err)
	}
	defer f.Close()

	rt := &lazyRuntime{engine: st.engine}
	defer rt.close()
	cfg := trace.ReplayConfig{Runtime: rt, GateWait: *gateWait, Plan: bound}
	if st.tools != "" {
		e, err := st.build(ctx, executor.NewConfig())
		if err != nil {
			return setupFailed(fs, s, err)
		}
		defer e.close()
		cfg.Registry = e.reg
	}

	r := trace.NewReader(f, 0)
	status, n := exitOK, 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(s, err)
		}
		if *id != "" && rec.ID != *id {
			continue
		}
		n++
		if cfg.Registry != nil && rec.Scope != "" {
			if _, err := cfg.Registry.Mode(rec.Scope); err != nil {
				return fail(s, fmt.Errorf("record %s: scope %s is not in --tools: %w", rec.ID, rec.Scope, err))
			}
		}
		rep, err := trace.Replay(ctx, rec, cfg)
		if err != nil {
			return fail(s, err)
		}
		if !rep.OK() {
			status = exitTool
		}
		printReplay(s, rec, rep, *asJSON)
	}
	if n == 0 {
		if *id != "" {
			return fail(s, fmt.Errorf("%s has no record of call %s", pos[0], *id))
		}
		return fail(s, fmt.Errorf("%s has no records", pos[0]))
	}
	return status
}

func printReplay(s *stdio, rec trace.Record, rep trace.Report, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(replayLine{ID: rec.ID, OK: rep.OK(), Divergence: rep.Divergence, Differences: rep.Differences, Text: rep.Result.Text,
			Unseeded: rec.Seed == nil})
		fmt.Fprintln(s.out, string(b))
		return
	}
	switch {
	case rep.Divergence != nil:
		fmt.Fprintf(s.out, "%s: %s\n", rec.ID, rep.Divergence.Error())
	case len(rep.Differences) > 0:
		fmt.Fprintf(s.out, "%s: the outcome differs:\n  %s\n", rec.ID, strings.Join(rep.Differences, "\n  "))
	default:
		fmt.Fprintf(s.out, "%s: reproduced (%d calls, %s)\n", rec.ID, len(rep.Record.Calls), outcomeWord(rep.Record.Outcome))
		return
	}
	if rec.Seed == nil {
		fmt.Fprintf(s.out, "  %s\n", unseededNote)
	}
}

func outcomeWord(o string) string {
	if o == "ok" {
		return "ok"
	}
	return "failed: " + o
}
