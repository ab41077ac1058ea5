package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/policy"
)

// BenchmarkCompiled_CheckArgs is one constraint's evaluation over a nested
// call's arguments as the executor reads them (internal/resolve.Args; a
// flat object but for the list): "bounded" goes without CEL's cost tracker
// (its estimate bounds it), "tracked" keeps it (it walks an argument);
// "decoded" is CheckConstraints over the decoded map.
func BenchmarkCompiled_CheckArgs(b *testing.B) {
	for _, c := range []struct{ name, src, args string }{
		{"bounded", "args.i < 10", `{"i":1,"to":"a@corp.test"}`},
		{"bounded-string", `args.to.endsWith("@corp.test")`, `{"i":1,"to":"a@corp.test"}`},
		{"tracked", "args.items.all(x, x < 10)", `{"items":[1,2]}`},
	} {
		p, err := policy.Compile(policy.Declaration{Constraints: []string{c.src}})
		if err != nil {
			b.Fatal(err)
		}
		var args resolve.Args
		if err := resolve.ReadArgs(json.RawMessage(c.args), &args); err != nil {
			b.Fatal(err.Message)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if failed, why := p.CheckArgs(&args); failed != "" {
					b.Fatal(why)
				}
			}
		})
		b.Run(c.name+"/decoded", func(b *testing.B) {
			m := args.Map()
			b.ReportAllocs()
			for range b.N {
				if failed, why := p.CheckConstraints(m); failed != "" {
					b.Fatal(why)
				}
			}
		})
	}
}
