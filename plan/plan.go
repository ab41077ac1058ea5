// Package plan reads a run_code program without running it and says what it
// can do: every call site of a bound tool, its literal arguments, whether it
// can run more than once, and whether the program reaches the tools object
// in a way the reader cannot follow (Plan.Dynamic). It also binds a run to
// a plan someone approved (bound.go): the intersection of what the program
// can do and what was approved, which the executor enforces call by call.
//
// The program is stripped of its types by transpile, exactly as run_code
// strips it, and the JavaScript is parsed by goja's parser; the reader walks
// the AST (walk.go). It imports api, transpile and goja's parser only.
//
// The reader is sound in one direction: a nested call a program can make is
// a listed call site, or the plan is dynamic (RATIONALE.md, "What does a
// plan promise?"). It is not precise: a program it cannot follow is dynamic
// even when it is harmless.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/dop251/goja/parser"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/transpile"
)

// Plan is what a program can do, read without running it (api.Plan: the
// vocabulary's, so the wire of ptcx serve carries it without this package).
type Plan = api.Plan

// Call is one call site of a tool (api.PlanCall).
type Call = api.PlanCall

// Reason is one construct that makes a plan dynamic (api.PlanReason).
type Reason = api.PlanReason

// Opaque is the member of Call.Computed that stands for members the reader
// cannot name.
const Opaque = "..."

// maxReasons bounds Plan.Reasons: one is enough to make a plan dynamic,
// a few help whoever reads it.
const maxReasons = 16

// Hash returns the SHA-256, in hex, of a program's text as sent.
func Hash(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// Read reads code, a run_code program (TypeScript, the body of an async
// function), against the names of the tools bound to it (the visible
// tools but run_code). A program over api.MaxCodeBytes, or that does not
// strip (a syntax error, a program over transpile's bounds), is an error:
// it could not run either. A stripped program the parser cannot read is a
// dynamic plan, saying so.
func Read(code string, tools []string) (*Plan, error) {
	if len(code) > api.MaxCodeBytes {
		return nil, fmt.Errorf("plan: the program is %d bytes, over the limit of %d", len(code), api.MaxCodeBytes)
	}
	prog, err := transpile.Strip(code)
	if err != nil {
		return nil, err
	}
	p := &Plan{Hash: Hash(code), Calls: []Call{}}
	bound := make(map[string]bool, len(tools))
	for _, t := range tools {
		bound[t] = true
	}
	// Wrapped as the guest wraps it (glue.c), so that positions are the
	// guest's, which prog.Locate maps back to the text as sent.
	src := wrapHead + prog.JS + "\n}})"
	ast, perr := parser.ParseFile(nil, "", src, 0, parser.WithDisableSourceMaps)
	if perr != nil {
		p.Dynamic = true
		p.Reasons = []Reason{{Why: "the plan reader cannot parse this program (" + firstLine(perr.Error()) + "), so it cannot list its calls"}}
	} else {
		w := &walker{bound: bound, file: ast.File, prog: prog, plan: p}
		w.program(ast)
	}
	seen := map[string]bool{}
	if p.Dynamic {
		for _, t := range tools {
			seen[t] = true
		}
	} else {
		for _, c := range p.Calls {
			seen[c.Tool] = true
		}
	}
	p.Tools = make([]string, 0, len(seen))
	for t := range seen {
		p.Tools = append(p.Tools, t)
	}
	sort.Strings(p.Tools)
	return p, nil
}

// wrapHead is the guest's wrapper of a program (glue.c), on the same line
// as the program's first line.
const wrapHead = "(function(tools){return async function(){"

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
