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
	fmt.Fprintf(&b, "Measured by `ptcx bench` (ptcx %s) on %s, %s, in one run: medians of %d samples each (%d for per_call_await and python_per_call_await, %d for serve_e2e and serve_client_tool, %d for "+
		"runs_per_second, serve_rps and the rss_* workloads, whose samples are many runs or instances each; the parked "+
		"workloads' are their resumes), a latency, session or per-call "+
		"workload's taken in %s, every implementation measuring its share in each, in turn; the ratios are ptcx ÷ peer "+
		"from the same run (below 1: ptcx costs less; for runs/s, above 1: ptcx does more).\n\n",
		r.Version, r.Machine, r.When.UTC().Format("2006-01-02"), p.Samples(Latency), p.Samples(PerCall), p.Samples(ServeLatency), p.Samples(Throughput), plural(p.Rounds, "round"))
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
		if as := r.anchors(w); len(as) > 0 {
			line += ". Anchors (no verdict): " + strings.Join(as, "; ")
		}
		if c := r.ceiling(w); c != "" {
			line += ". " + c
		}
		b.WriteString(line + ".\n")
	}
	var missing, notes noteLines
	for _, res := range r.Results {
		switch {
		case res.N == 0:
			missing.add(res)
		case res.Note != "":
			notes.add(res)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n" + notes.String())
	}
	if len(missing) > 0 {
		b.WriteString("\nNot measured:\n\n" + missing.String())
	}
	return b.String()
}

// anchors are w's anchors beside ptcx's median: "ptcx ÷ Monty's published
// ten feeds (…) 0.4 ms: 5.2"; "not measured" without ptcx's.
func (r Report) anchors(w Workload) []string {
	own, ok := find(r.Results, ImplPTCX, w.Name)
	var out []string
	for _, a := range w.Anchors {
		head := fmt.Sprintf("÷ %s, %s %s", a.Label, trim(a.Value), w.Unit)
		if ok && a.Value > 0 {
			out = append(out, head+": "+trim(own.Med/a.Value))
		} else {
			out = append(out, head+": not measured")
		}
	}
	return out
}

// ceiling is w's median beside the bound its Ceiling peers' rates put on
// it: "Ceiling (no verdict): 1 ÷ (1/ptcx-in-process + 1/http-floor),
// 8022 runs/s: ptcx ÷ it 0.87"; "" without a Ceiling, or "…: not
// measured" without ptcx's median or a peer's.
func (r Report) ceiling(w Workload) string {
	if len(w.Ceiling) == 0 {
		return ""
	}
	terms := make([]string, len(w.Ceiling))
	var sum float64
	measured := true
	for i, name := range w.Ceiling {
		terms[i] = "1/" + name
		if p, ok := find(r.Results, name, w.Name); ok && p.Med > 0 {
			sum += 1 / p.Med
		} else {
			measured = false
		}
	}
	head := "Ceiling (no verdict): 1 ÷ (" + strings.Join(terms, " + ") + ")"
	own, ok := find(r.Results, ImplPTCX, w.Name)
	if !measured || !ok || own.Med <= 0 {
		return head + ": not measured"
	}
	bound := 1 / sum
	return fmt.Sprintf("%s, %s %s: ptcx ÷ it %s", head, trim(bound), w.Unit, trim(own.Med/bound))
}

// noteLines are the lines of the notes or of the results not measured:
// one per implementation and note, naming every workload that has it, in
// the order first seen (a peer of one language is unsupported on every
// workload of the other, for one reason).
type noteLines []noteLine

type noteLine struct {
	impl, note string
	metrics    []string
}

func (n *noteLines) add(res Result) {
	for i := range *n {
		if l := &(*n)[i]; l.impl == res.Impl && l.note == res.Note {
			l.metrics = append(l.metrics, res.Metric)
			return
		}
	}
	*n = append(*n, noteLine{impl: res.Impl, note: res.Note, metrics: []string{res.Metric}})
}

func (n noteLines) String() string {
	var b strings.Builder
	for _, l := range n {
		fmt.Fprintf(&b, "- %s, `%s`: %s\n", l.impl, strings.Join(l.metrics, "`, `"), l.note)
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
