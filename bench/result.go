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
// workload, implementations in the order given, and returns one result per
// pair; onResult, when not nil, is given each as it comes. An
// implementation that fails a job gets a failed result for it and is still
// given the next. It stops at ctx's end, returning what it has and ctx's
// error.
func Run(ctx context.Context, impls []Impl, workloads []Workload, p Params, onResult func(Result)) ([]Result, error) {
	p, err := p.Check()
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, w := range workloads {
		j, err := w.Expand(p)
		if err != nil {
			return out, err
		}
		for _, impl := range impls {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			raw, err := impl.Measure(ctx, j)
			r := summarize(impl.Name(), w, p, raw, err)
			if onResult != nil {
				onResult(r)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// summarize turns raw samples into a result in w's unit.
func summarize(impl string, w Workload, p Params, raw Raw, err error) Result {
	r := Result{Impl: impl, Metric: w.Name, Unit: w.Unit, Note: raw.Note}
	switch {
	case errors.Is(err, ErrMissing):
		r.Note = err.Error()
		return r
	case err != nil:
		r.Note = "failed: " + err.Error()
		return r
	case len(raw.Samples) == 0:
		r.Note = "failed: no samples"
		return r
	}
	values := make([]float64, len(raw.Samples))
	base := 0.0
	if w.Kind == PerCall {
		if len(raw.Base) == 0 {
			r.Note = "failed: no baseline samples"
			return r
		}
		base = quantile(sorted(raw.Base), 0.5)
	}
	for i, s := range raw.Samples {
		if w.Kind == PerCall {
			s = (s - base) / float64(p.Calls)
		}
		values[i] = s / w.Scale
	}
	values = sorted(values)
	r.N, r.Min, r.Med, r.P90 = len(values), values[0], quantile(values, 0.5), quantile(values, 0.9)
	return r
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
