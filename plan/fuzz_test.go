package plan_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/plan"
)

// FuzzRead reads any text as a program: no panic, a plan or an error, a
// bounded time, and a plan that is dynamic or lists only bound tools.
func FuzzRead(f *testing.F) {
	for _, c := range readCases {
		f.Add(c.code)
	}
	f.Add("await tools.fs.read_file({path: [1, {a: [2, [3]]}]})")
	f.Add("a" + string(make([]byte, 100)))
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > api.MaxCodeBytes {
			return
		}
		start := time.Now()
		p, err := plan.Read(code, bound)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("reading took %v", d)
		}
		if err != nil {
			return
		}
		if p.Hash != plan.Hash(code) {
			t.Fatal("the hash is not the program's")
		}
		known := map[string]bool{}
		for _, b := range bound {
			known[b] = true
		}
		for _, c := range p.Calls {
			if !known[c.Tool] {
				t.Fatalf("a call of %q, which is not bound", c.Tool)
			}
		}
	})
}

// TestRead_large reads programs at the size limit and over it.
func TestRead_large(t *testing.T) {
	chain := "return 1" + strings.Repeat(" + 1", (api.MaxCodeBytes-8)/4)
	start := time.Now()
	p, err := plan.Read(chain, bound)
	if err == nil && p.Dynamic {
		t.Logf("a long chain is dynamic: %v", p.Reasons[0])
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("reading %d bytes took %v", len(chain), d)
	}
	if _, err := plan.Read(chain+" + 1 + 1 + 1", bound); err == nil {
		t.Fatal("a program over the size limit was read")
	}
}

// TestRead_nesting reads operator chains below and past the reader's
// nesting bound (transpile bounds brackets, but a chain a - b - c ... is as
// deep in the AST as it is long; a - b, since a chain of + is bounded by
// transpile's string folding): below it the plan is not dynamic; past it
// the plan is dynamic, saying why, and the walk stops there with the call
// before it listed.
func TestRead_nesting(t *testing.T) {
	chain := func(n int) string {
		return "await tools.fs.read_file({path: 'a'}); return 1" + strings.Repeat(" - 1", n)
	}
	for _, tt := range []struct {
		name    string
		n       int
		dynamic bool
	}{{"below", plan.MaxNest - 64, false}, {"past", plan.MaxNest + 64, true}} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := plan.Read(chain(tt.n), bound)
			if err != nil {
				t.Fatalf("a chain of %d: %v", tt.n, err)
			}
			if p.Dynamic != tt.dynamic {
				t.Fatalf("a chain of %d: dynamic %v, want %v (%v)", tt.n, p.Dynamic, tt.dynamic, p.Reasons)
			}
			if tt.dynamic && !strings.Contains(p.Reasons[0].Why, "nests too deeply") {
				t.Fatalf("a chain of %d: reason %q", tt.n, p.Reasons[0].Why)
			}
			if len(p.Calls) != 1 || p.Calls[0].Tool != "fs.read_file" {
				t.Fatalf("a chain of %d: calls %+v", tt.n, p.Calls)
			}
		})
	}
}
