package bench

import (
	"fmt"
	"strings"
)

// Markdown is the report as a table: each implementation's median per
// workload, then the headline figures, ptcx ÷ each peer from this run, then
// each target's verdict and why any result is missing.
func (r Report) Markdown(workloads []Workload) string {
	var b strings.Builder
	impls := r.Impls()
	var peers []string
	for _, i := range impls {
		if i != ImplPTCX {
			peers = append(peers, i)
		}
	}
	p := r.Params.withDefaults()
	fmt.Fprintf(&b, "Measured by `ptcx bench` (ptcx %s) on %s, %s, in one run: medians of %d samples each (%d for per_call_await, %d for "+
		"runs_per_second, serve_rps and the rss_* workloads, whose samples are many runs or instances each; the parked "+
		"workloads' are their resumes), a latency, session or per-call "+
		"workload's taken in %s, every implementation measuring its share in each, in turn; the ratios are ptcx ÷ peer "+
		"from the same run (below 1: ptcx costs less; for runs/s, above 1: ptcx does more).\n\n",
		r.Version, r.Machine, r.When.UTC().Format("2006-01-02"), p.samples(Latency), p.samples(PerCall), p.samples(Throughput), plural(p.Rounds, "round"))
	b.WriteString("| workload | unit |")
	for _, i := range impls {
		fmt.Fprintf(&b, " %s |", i)
	}
	for _, p := range peers {
		fmt.Fprintf(&b, " ptcx ÷ %s |", p)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(impls)+len(peers)) + "\n")
	for _, w := range workloads {
		fmt.Fprintf(&b, "| `%s` | %s |", w.Name, w.Unit)
		for _, i := range impls {
			if res, ok := find(r.Results, i, w.Name); ok {
				fmt.Fprintf(&b, " %s |", trim(res.Med))
			} else {
				b.WriteString(" — |")
			}
		}
		own, okOwn := find(r.Results, ImplPTCX, w.Name)
		for _, p := range peers {
			if peer, ok := find(r.Results, p, w.Name); ok && okOwn && peer.Med > 0 {
				fmt.Fprintf(&b, " **%s** |", trim(own.Med/peer.Med))
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\nWhat each workload is, and its targets (on ptcx's median, or on the ratio):\n\n")
	verdicts := Verdicts(workloads, r.Results)
	for _, w := range workloads {
		var vs []string
		for _, v := range verdicts {
			if v.Workload.Name == w.Name {
				vs = append(vs, v.String())
			}
		}
		line := fmt.Sprintf("- `%s`: %s", w.Name, w.Describe(r.Params))
		if len(vs) > 0 {
			line += ". Targets: " + strings.Join(vs, "; ")
		}
		b.WriteString(line + ".\n")
	}
	var missing, notes []string
	for _, res := range r.Results {
		line := fmt.Sprintf("- %s, `%s`: %s", res.Impl, res.Metric, res.Note)
		switch {
		case res.N == 0:
			missing = append(missing, line)
		case res.Note != "":
			notes = append(notes, line)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	if len(missing) > 0 {
		b.WriteString("\nNot measured:\n\n" + strings.Join(missing, "\n") + "\n")
	}
	return b.String()
}

// plural is "1 round", "5 rounds".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
