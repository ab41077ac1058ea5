package wasmhost_test

import (
	"context"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/bench"
	"github.com/ptcx/ptcx/wasmhost"
)

// BenchmarkSession_pythonFeeds is BenchmarkSession_feeds for bench's
// python_session_feeds: its ten Python feeds in a new session per
// operation, closed after them; guest-µs/feed is the exports' time
// (Stats.Compute).
func BenchmarkSession_pythonFeeds(b *testing.B) {
	requirePython(b)
	rt := newRuntime(b, testConfig())
	j := job(b, "python_session_feeds", bench.Params{})
	ctx := context.Background()
	// The Python Runtime (its compiled module and image) is made at the
	// first Python run: not timed.
	if _, err := rt.Run(ctx, wasmhost.Program{JS: "1", Language: api.LanguagePython}, echo); err != nil {
		b.Fatal(err)
	}
	var guest time.Duration
	feeds := 0
	b.ReportAllocs()
	for b.Loop() {
		s, err := rt.NewSession(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range j.Feeds {
			out, err := rt.Run(ctx, wasmhost.Program{JS: f.Python, Language: api.LanguagePython, Tools: j.Tools, Session: s}, echo)
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
