package wasmhost_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/wasmhost"
)

// The sandbox's share of bench's session_feeds, and where a session's
// programs cost more than plain ones: docs/performance.md, "Sessions".

// BenchmarkSession_feeds runs bench's ten session feeds (their
// JavaScript) in a new session per operation, closed after them, and
// reports the guest's time per feed (Stats.Compute: the exports' time,
// compiling each feed in the session's scope included).
func BenchmarkSession_feeds(b *testing.B) {
	rt := newRuntime(b, testConfig())
	j := job(b, "session_feeds", bench.Params{})
	ctx := context.Background()
	var guest time.Duration
	feeds := 0
	b.ReportAllocs()
	for b.Loop() {
		s, err := rt.NewSession(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range j.Feeds {
			out, err := rt.Run(ctx, wasmhost.Program{JS: f.JS + "\nreturn (" + f.Result + ")", Tools: j.Tools, Session: s}, echo)
			if err != nil {
				b.Fatal(err)
			}
			if err := bench.CheckAnswer(f.Program(), out.Result); err != nil {
				b.Fatal(err)
			}
			guest += out.Stats.Compute
			feeds++
		}
		s.Close(ctx)
	}
	b.ReportMetric(float64(guest.Nanoseconds())/float64(feeds)/1e3, "guest-µs/feed")
}

// BenchmarkSession_depth is one program's guest time (Stats.Compute) at
// a depth of a session (the programs before it in the session: each is
// compiled in the scope of the one before, so a direct eval's closure
// grows with every program), beside a plain run of a new program (compiled
// and run, no session) and of one seen before (its bytecode cached).
func BenchmarkSession_depth(b *testing.B) {
	rt := newRuntime(b, testConfig())
	ctx := context.Background()
	for _, depth := range []int{1, 10, 30, 100} {
		b.Run("session-"+strconv.Itoa(depth), func(b *testing.B) {
			var guest time.Duration
			for b.Loop() {
				s, err := rt.NewSession(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for i := range depth {
					out, err := rt.Run(ctx, wasmhost.Program{JS: "const v" + strconv.Itoa(i) + " = 1; return 1", Session: s}, echo)
					if err != nil {
						b.Fatal(err)
					}
					if i == depth-1 {
						guest += out.Stats.Compute
					}
				}
				s.Close(ctx)
			}
			b.ReportMetric(float64(guest.Nanoseconds())/float64(b.N)/1e3, "guest-µs/program")
		})
	}
	for _, cached := range []bool{false, true} {
		name := "plain-new"
		if cached {
			name = "plain-cached"
		}
		b.Run(name, func(b *testing.B) {
			var guest time.Duration
			n := 0
			for b.Loop() {
				n++
				js := "const v = 1; return 1"
				if !cached {
					js += " // " + strconv.Itoa(n) + " " + b.Name()
				}
				out, err := rt.Run(ctx, wasmhost.Program{JS: js}, echo)
				if err != nil {
					b.Fatal(err)
				}
				guest += out.Stats.Compute
			}
			b.ReportMetric(float64(guest.Nanoseconds())/float64(b.N)/1e3, "guest-µs/program")
		})
	}
}

// BenchmarkSession_globals is the guest time of a program that reads a
// global (Math) 10,000 times in a loop, run plainly and at depths of a
// session (the programs before it in a new session): a name a program
// does not declare is looked up through the scopes of the programs before
// it.
func BenchmarkSession_globals(b *testing.B) {
	rt := newRuntime(b, testConfig())
	ctx := context.Background()
	const loop = "let s = 0; for (let i = 0; i < 10000; i++) s += Math.abs(i); return s"
	for _, depth := range []int{-1, 0, 10, 100} {
		name := "plain"
		if depth >= 0 {
			name = "depth-" + strconv.Itoa(depth)
		}
		b.Run(name, func(b *testing.B) {
			var guest time.Duration
			for b.Loop() {
				var s *wasmhost.Session
				if depth >= 0 {
					var err error
					if s, err = rt.NewSession(ctx); err != nil {
						b.Fatal(err)
					}
					for i := range depth {
						if _, err := rt.Run(ctx, wasmhost.Program{JS: "const v" + strconv.Itoa(i) + " = 1", Session: s}, echo); err != nil {
							b.Fatal(err)
						}
					}
				}
				out, err := rt.Run(ctx, wasmhost.Program{JS: loop, Session: s}, echo)
				if err != nil {
					b.Fatal(err)
				}
				if string(out.Result) != "49995000" {
					b.Fatalf("result %s", out.Result)
				}
				guest += out.Stats.Compute
				if s != nil {
					s.Close(ctx)
				}
			}
			b.ReportMetric(float64(guest.Nanoseconds())/float64(b.N)/1e3, "guest-µs/program")
		})
	}
}
