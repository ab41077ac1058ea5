package executor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// BenchmarkExecutor_MayAsk is what ptcx serve adds to each execution's
// start to know whether its program may park on an approval, for tool
// sets of 10 and 100 tools none of which asks (the whole list is read);
// baseline: SchedulingClass, one resolution.
func BenchmarkExecutor_MayAsk(b *testing.B) {
	for _, n := range []int{10, 100} {
		reg := registry.New()
		if err := reg.DeclareMode(registry.Deployment, api.ModePTC); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if err := reg.Register(registry.Deployment, registry.Tool{Name: fmt.Sprintf("t%d", i),
				Body: func(context.Context, api.Input) (api.Output, error) { return api.Output{}, nil }}); err != nil {
				b.Fatal(err)
			}
		}
		ex, err := executor.New(reg, executor.NewConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			for b.Loop() {
				if ex.MayAsk("") {
					b.Fatal("no tool asks")
				}
			}
		})
		b.Run(fmt.Sprintf("baseline_SchedulingClass/tools=%d", n), func(b *testing.B) {
			for b.Loop() {
				ex.SchedulingClass("", "t0")
			}
		})
	}
}
