package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// BenchmarkParkApprovals_parkAndResume parks a program on a call that asks
// and resumes it approved (the call's phases run twice, its body once);
// baseline: the same program parked on a call of a tool that answers later
// (held before its phases) and resumed with its answer.
func BenchmarkParkApprovals_parkAndResume(b *testing.B) {
	w := newApprovalWorld(b, nil)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		code   string
		later  func(string) bool
		answer executor.Answer
	}{
		{"approval", `const a = await tools.add({}); return (await tools.send({to: a.tool})).tool`, nil, approved("")},
		{"baseline_tool", `const a = await tools.add({}); return (await tools.read_inbox({to: a.tool})).tool`,
			func(tool string) bool { return tool == "read_inbox" },
			executor.Answer{Output: api.Output{Value: json.RawMessage(`{"tool":"read_inbox"}`)}}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			call := runCodeCall(tt.code)
			for b.Loop() {
				_, p := w.ex.ExecuteParkable(ctx, call, tt.later)
				if p == nil {
					b.Fatal("not parked")
				}
				if res, _ := p.Resume(ctx, map[int32]executor.Answer{p.Calls()[0].ID: tt.answer}); !res.OK() {
					b.Fatal(res.Err)
				}
			}
		})
	}
}
