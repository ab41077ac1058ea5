package bench

import (
	"fmt"
	"strings"
)

// Verdict is one target checked against a run's results.
type Verdict struct {
	Workload Workload
	Target   Target
	// Value is ptcx's median (or Target.Field's figure), the ratio
	// ptcx ÷ Target.Against's or Target.Of's median, or with Target.Plus
	// the difference ptcx − theirs.
	Value float64
	// Measured is false when ptcx or the peer measured nothing; OK is then
	// false too.
	Measured bool
	OK       bool
}

// String is the verdict for a table: "≤ 3 ms: 1.99 ✓",
// "÷ node-worker ≤ 0.01: 0.004 ✓", "÷ ptcx-wasmtime ≥ 3: 1.5 ✗ MISSED",
// "÷ goja ≤ 1: not measured".
func (v Verdict) String() string {
	head := v.Target.Describe(v.Workload)
	switch {
	case !v.Measured:
		return head + ": not measured"
	case v.OK:
		return head + ": " + trim(v.Value) + " ✓"
	default:
		return head + ": " + trim(v.Value) + " ✗ MISSED"
	}
}

// Describe is t on w, as a verdict begins: "≤ 0.3 ms",
// "÷ quickjs-wasi ≤ 0.333", "÷ ptcx-wasmtime ≥ 3".
func (t Target) Describe(w Workload) string {
	cmp := "≤"
	if t.floor(w) {
		cmp = "≥"
	}
	head := ""
	if t.Subject != "" {
		head = t.Subject + " "
	}
	if t.Field != "" {
		head += t.Field + " "
	}
	switch {
	case t.Of != "" && t.Plus:
		return fmt.Sprintf("%s− ptcx's %s %s %s %s", head, t.Of, cmp, trim(t.Limit), w.Unit)
	case t.Of != "":
		return fmt.Sprintf("%s÷ ptcx's %s %s %s", head, t.Of, cmp, trim(t.Limit))
	case t.Against != "" && t.Plus:
		return fmt.Sprintf("%s− %s %s %s %s", head, t.Against, cmp, trim(t.Limit), w.Unit)
	case t.Against != "":
		return fmt.Sprintf("%s÷ %s %s %s", head, t.Against, cmp, trim(t.Limit))
	}
	if t.Field != "" { // its name says its unit
		return fmt.Sprintf("%s%s %s", head, cmp, trim(t.Limit))
	}
	return fmt.Sprintf("%s%s %s %s", head, cmp, trim(t.Limit), w.Unit)
}

// Verdicts checks every workload's targets against results.
func Verdicts(workloads []Workload, results []Result) []Verdict {
	var out []Verdict
	for _, w := range workloads {
		for _, t := range w.Targets {
			v := Verdict{Workload: w, Target: t}
			subject := ImplPTCX
			if t.Subject != "" {
				subject = t.Subject
			}
			own, okOwn := find(results, subject, w.Name)
			mine := own.Med
			if t.Field != "" {
				mine, okOwn = own.Extra[t.Field]
			}
			switch {
			case !okOwn:
			case t.Of != "":
				if other, ok := find(results, ImplPTCX, t.Of); ok && other.Med > 0 {
					v.Value, v.Measured = mine/other.Med, true
					if t.Plus {
						v.Value = mine - other.Med
					}
				}
			case t.Against == "":
				v.Value, v.Measured = mine, true
			default:
				if peer, ok := find(results, t.Against, w.Name); ok && peer.Med > 0 {
					v.Value, v.Measured = mine/peer.Med, true
					if t.Plus {
						v.Value = mine - peer.Med
					}
				}
			}
			if v.Measured {
				v.OK = v.Value <= t.Limit
				if t.floor(w) {
					v.OK = v.Value >= t.Limit
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// find returns impl's measured result for metric.
func find(results []Result, impl, metric string) (Result, bool) {
	for _, r := range results {
		if r.Impl == impl && r.Metric == metric && r.N > 0 {
			return r, true
		}
	}
	return Result{}, false
}

// trim formats v with three significant digits, or as an integer from 1000.
func trim(v float64) string {
	if v >= 1000 || v <= -1000 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.3g", v)
	if strings.Contains(s, "e") {
		s = fmt.Sprintf("%.4f", v)
	}
	return s
}
