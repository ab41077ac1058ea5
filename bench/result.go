package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Result is one implementation's figure for one workload: a JSON line of the
// same shape for every implementation. N is the number of samples; 0 when
// nothing was measured, and Note then says why ("missing: …" or
// "failed: …").
type Result struct {
	Impl   string  `json:"impl"`
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Med    float64 `json:"med"`
	P90    float64 `json:"p90"`
	Note   string  `json:"note"`
	// Rounds is the median of each round's values, in round order, for a
	// workload measured in more than one round (Params.Rounds): every
	// implementation's round k was measured at the same time, so the
	// rounds of two implementations pair up (the headline ratio is still
	// the ratio of the medians, Med).
	Rounds []float64 `json:"rounds,omitempty"`
	// Extra are figures a workload gives beside its samples, by name, in
	// the units their names say (Parked: rss_mib, parked_mib, park_all_s,
	// resume_p99_ms); a Target's Field bounds one.
	Extra map[string]float64 `json:"extra,omitempty"`
}

// median is the middle of values (the mean of the two middle ones for an
// even count), which it leaves as they are. A round holds few samples (two
// by default), where Med's nearest rank (quantile) would take the lower
// one.
func median(values []float64) float64 {
	s := sorted(values)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Missing and Failed tell a result that measured nothing, and why;
// Unsupported is a missing result of an implementation that runs here but
// cannot measure that kind of workload (ErrUnsupported).
func (r Result) Missing() bool { return r.N == 0 && strings.HasPrefix(r.Note, "missing") }
func (r Result) Failed() bool  { return r.N == 0 && !r.Missing() }
func (r Result) Unsupported() bool {
	return r.N == 0 && strings.HasPrefix(r.Note, ErrUnsupported.Error()+":")
}

// Run measures every workload on every implementation, workload by
// workload, and returns one result per pair, implementations in the order
// given; onResult, when not nil, is given each as it comes. A Latency or
// PerCall workload is measured in p.Rounds rounds, every implementation
// taking its share of the samples in each, the order rotated by one each
// round; a result is then every round's values together (a per-call value
// against its own round's baseline), with its last round's note. An
// implementation that fails a job gets a failed result for the workload
// (missing only when it is missing in the first round), is not given its
// later rounds, and is still given the next workload. A workload's results
// come, to onResult and in the slice, once all its rounds are done. It
// stops at ctx's end, returning the results of the workloads it finished
// and ctx's error.
func Run(ctx context.Context, impls []Impl, workloads []Workload, p Params, onResult func(Result)) ([]Result, error) {
	p, err := p.Check()
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, w := range workloads {
		results, err := runWorkload(ctx, impls, w, p)
		for _, r := range results {
			if onResult != nil {
				onResult(r)
			}
			out = append(out, r)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// runWorkload measures w on every implementation, in its rounds. On ctx's
// end it returns nothing of w and ctx's error.
func runWorkload(ctx context.Context, impls []Impl, w Workload, p Params) ([]Result, error) {
	rounds, total := p.rounds(w.Kind), p.Samples(w.Kind)
	results := make([]Result, len(impls))
	values := make([][]float64, len(impls))
	perRound := make([][]float64, len(impls)) // each round's median (Result.Rounds)
	done := make([]bool, len(impls))          // failed, or missing: not given later rounds
	first := 0
	for r := range rounds {
		n := roundSamples(total, rounds, r)
		j, err := w.expand(p, first, n)
		if err != nil {
			return nil, err
		}
		first += len(j.Programs)
		for k := range impls {
			i := (k + r) % len(impls)
			if done[i] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			raw, err := Raw{}, runsLanguage(impls[i], w.Language)
			if err == nil {
				raw, err = impls[i].Measure(ctx, j)
			}
			v, res := sampleValues(impls[i].Name(), w, p, raw, err)
			if v == nil {
				// Missing in its first round, it is missing here; past
				// it (it ran before), or failing, it failed.
				if rounds > 1 && (r > 0 || !res.Missing()) {
					res.Note = fmt.Sprintf("failed: round %d of %d: %s", r+1, rounds, strings.TrimPrefix(res.Note, "failed: "))
				}
				results[i], done[i] = res, true
				continue
			}
			results[i].Note = res.Note
			results[i].Extra = raw.Extra
			values[i] = append(values[i], v...)
			if rounds > 1 {
				perRound[i] = append(perRound[i], median(v))
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // it ended during the last measurement, which failed for it
	}
	for i, impl := range impls {
		if done[i] {
			continue
		}
		extra := results[i].Extra
		results[i] = summarize(impl.Name(), w, values[i], results[i].Note)
		results[i].Rounds = perRound[i]
		results[i].Extra = extra
	}
	return results, nil
}

// sampleValues turns one job's raw samples into values in w's unit; when
// there are none, the result says why (N 0, its Note "missing: …" or
// "failed: …").
func sampleValues(impl string, w Workload, p Params, raw Raw, err error) ([]float64, Result) {
	r := Result{Impl: impl, Metric: w.Name, Unit: w.Unit, Note: raw.Note}
	switch {
	case errors.Is(err, ErrMissing):
		r.Note = err.Error()
		return nil, r
	case err != nil:
		r.Note = "failed: " + err.Error()
		return nil, r
	case len(raw.Samples) == 0:
		r.Note = "failed: no samples"
		return nil, r
	}
	values := make([]float64, len(raw.Samples))
	base := 0.0
	if w.Kind == PerCall {
		if len(raw.Base) == 0 {
			r.Note = "failed: no baseline samples"
			return nil, r
		}
		base = quantile(sorted(raw.Base), 0.5)
	}
	for i, s := range raw.Samples {
		if w.Kind == PerCall {
			s = (s - base) / float64(p.Calls)
		}
		values[i] = s / w.Scale
	}
	return values, r
}

// summarize is the result of values (at least one), with note.
func summarize(impl string, w Workload, values []float64, note string) Result {
	values = sorted(values)
	return Result{Impl: impl, Metric: w.Name, Unit: w.Unit, Note: note,
		N: len(values), Min: values[0], Med: quantile(values, 0.5), P90: quantile(values, 0.9)}
}

func sorted(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// quantile is the q-quantile of sorted values (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// WriteJSONLines writes one JSON line per result.
func WriteJSONLines(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("bench: writing results: %w", err)
		}
	}
	return nil
}
