package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
)

// BenchmarkParkCheck parks a program on a call its caller answers later,
// and resumes it: plain (the check reads the tool's declaration only),
// bound to a plan (the check admits the call on a copy of the bound plan),
// and passing a handle (the check and the caller's arguments substitute
// it).
func BenchmarkParkCheck(b *testing.B) {
	for _, bc := range []struct {
		name, code string
		plan       bool
	}{
		{"plain", `return await tools.note({n: 1})`, false},
		{"plan", `return await tools.note({n: 1})`, true},
		{"handle", `const h = await tools.doc({}); return await tools.note({text: h})`, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := newParkCheckWorld(b)
			ctx := context.Background()
			call := runCodeCall(bc.code)
			if bc.plan {
				p, err := w.ex.Plan("", bc.code)
				if err != nil {
					b.Fatal(err)
				}
				call.Plan = p
			}
			answer := executor.Answer{Output: api.Output{Value: json.RawMessage(`"ok"`)}}
			b.ReportAllocs()
			for b.Loop() {
				res, parked := w.ex.ExecuteParkable(ctx, call, answersLater)
				if parked == nil {
					b.Fatalf("not parked: %+v", res.Err)
				}
				calls := parked.Calls()
				if res, again := parked.Resume(ctx, map[int32]executor.Answer{calls[0].ID: answer}); again != nil || !res.OK() {
					b.Fatalf("%+v", res.Err)
				}
			}
		})
	}
}
