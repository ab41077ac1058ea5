package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ptcx/ptcx/internal/testkit"
)

// BenchmarkAfterSession_floor puts after_session beside its floor, in
// the same rounds: `return 1 + 1` right after a trivial run (as
// trivial_e2e, the caches warm), right after a session of the ten feeds
// closed (after_session), and right after ten plain runs of new programs
// (as much other work, no session). The last is what any run pays after
// other work on this machine (its caches cold); after_session ÷ tight
// above it is what sessions still cost the runs beside them:
//
//	go test -run '^$' -bench AfterSession_floor -benchtime 200x ./bench
func BenchmarkAfterSession_floor(b *testing.B) {
	testkit.RequireGuest(b)
	ctx := context.Background()
	own, err := NewPTCX(ctx, Params{})
	if err != nil {
		b.Fatal(err)
	}
	defer own.Close(ctx)
	w, err := Lookup("session_feeds")
	if err != nil {
		b.Fatal(err)
	}
	j, err := w.Expand(Params{})
	if err != nil {
		b.Fatal(err)
	}
	trivial := Program{TS: "return 1 + 1", Answer: "2"}
	n := 0
	before := []func() error{
		func() error { return own.run(ctx, trivial) }, // tight
		func() error { // after a session
			s, err := own.openSession(ctx)
			if err != nil {
				return err
			}
			if err := runFeeds(ctx, j, s); err != nil {
				return err
			}
			return s.Close(ctx)
		},
		func() error { // after ten new programs
			for range len(j.Feeds) {
				n++
				p := Program{TS: fmt.Sprintf("const a = [1, 2, 3].map((x: number) => x * %d); return a.length", n), Answer: "3"}
				if err := own.run(ctx, p); err != nil {
					return err
				}
			}
			return nil
		},
	}
	took := make([][]float64, len(before))
	i := 0
	for b.Loop() {
		for k := range before {
			at := (k + i) % len(before) // rotated by one each round
			if err := before[at](); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := own.run(ctx, trivial); err != nil {
				b.Fatal(err)
			}
			took[at] = append(took[at], float64(time.Since(start).Nanoseconds())/1e6)
		}
		i++
	}
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	tight := med(took[0])
	b.ReportMetric(tight, "tight-ms")
	b.ReportMetric(med(took[1])/tight, "after-session÷tight")
	b.ReportMetric(med(took[2])/tight, "after-plain÷tight")
}
