package plan_test

import (
	"strings"
	"testing"

	"github.com/ptcx/ptcx/plan"
)

// manySites is a program of 5,000 call sites of two tools.
var manySites = strings.Repeat("await tools.lookup({q: 1})\nawait tools.send_email({to: 'x'})\n", 2500)

// BenchmarkRead is the baseline of BenchmarkRead_annotated: reading alone.
func BenchmarkRead(b *testing.B) {
	for b.Loop() {
		if _, err := plan.Read(manySites, bound); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead_annotated reads and annotates (plan.Annotate), as
// Executor.Plan and every plan-bound run do.
func BenchmarkRead_annotated(b *testing.B) {
	for b.Loop() {
		p, err := plan.Read(manySites, bound)
		if err != nil {
			b.Fatal(err)
		}
		plan.Annotate(p, rules)
	}
}
