package bench

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/transpile"
)

// Job is a workload expanded for one run of the benchmark: the programs
// themselves, each with its answer. It is what every implementation is
// given; the Node drivers receive it as JSON.
type Job struct {
	Workload string `json:"workload"`
	Kind     Kind   `json:"kind"`
	// Language is the workload's (Workload.Language): "" or TypeScript,
	// whose programs are TS and JS, or Python, whose programs are Python.
	Language api.Language `json:"language,omitempty"`
	Tools    []string     `json:"tools"`
	Samples  int          `json:"samples"`
	Programs []Program    `json:"programs"` // one (every run) or Samples+1 (warm-up, then one per run): Program
	Base     []Program    `json:"base,omitempty"`
	Calls    int          `json:"calls"`
	Live     int          `json:"live"`
	Parallel int          `json:"parallel"`
	Batch    int          `json:"batch"`
	// Feeds are a Session or AfterSession job's programs, in order: TS
	// "Code; return (Result)" for ptcx, JS the Code stripped, for a peer
	// to run as a script (then it evaluates Result), Answer the Result's
	// JSON.
	Feeds []SessionFeed `json:"feeds,omitempty"`
	// Store is a Parked job's (Workload.Store); Parked its count.
	Store  string `json:"store,omitempty"`
	Parked int    `json:"parked,omitempty"`
	// Twin is the job of the workload's twin (Workload.Twin) for the same
	// round, which ImplPTCXTwin measures; nil without one. Peers are not
	// sent it.
	Twin *Job `json:"-"`
}

// SessionFeed is one feed of a job (Job.Feeds). A Python job's feeds
// have no TS or JS: Python is "Code\nResult" (ptcx runs it in the
// session, Result its final expression) and Block the Code alone (a peer
// without sessions runs the blocks of the feeds so far, then Result).
type SessionFeed struct {
	TS     string `json:"ts"`
	JS     string `json:"js"`
	Python string `json:"python,omitempty"`
	Block  string `json:"block,omitempty"`
	Result string `json:"result"`
	Answer string `json:"answer"`
}

// Program is the feed as a program of its own, for CheckAnswer.
func (f SessionFeed) Program() Program {
	return Program{TS: f.TS, JS: f.JS, Python: f.Python, Answer: f.Answer}
}

// Program is one program of a job: TS as ptcx receives it, JS with its
// types stripped (for the peers, which take no TypeScript; stripping it
// is not part of what they are timed on), and the JSON of the value it
// must return. A Python job's program is Python instead (TS and JS
// empty): a module body whose final expression statement, on its last
// line, is its value.
type Program struct {
	TS     string `json:"ts"`
	JS     string `json:"js"`
	Python string `json:"python,omitempty"`
	Answer string `json:"answer"`
}

// Source is p's source as run_code receives it, and its language.
func (p Program) Source() (string, api.Language) {
	if p.Python != "" {
		return p.Python, api.LanguagePython
	}
	return p.TS, api.LanguageTypeScript
}

// Warmup is the program run once before the samples are taken.
func (j Job) Warmup() Program { return j.Programs[0] }

// Program is the program of sample i (0-based).
func (j Job) Program(i int) Program {
	if len(j.Programs) == 1 {
		return j.Programs[0]
	}
	return j.Programs[i+1]
}

// Expand returns w's job under p (p's defaults filled in), all its
// samples in one round.
func (w Workload) Expand(p Params) (Job, error) {
	p = p.withDefaults()
	return w.expand(p, 0, p.Samples(w.Kind))
}

// expand returns w's job of samples samples; when every run is a new
// program, the programs are numbered from first (a round's programs are
// not those of the rounds before it).
func (w Workload) expand(p Params, first, samples int) (Job, error) {
	j := Job{Workload: w.Name, Kind: w.Kind, Language: w.Language, Tools: w.Tools, Samples: samples,
		Calls: p.Calls, Live: p.Live, Parallel: p.Parallel, Batch: p.Batch, Store: w.Store}
	switch w.Kind {
	case ServeThroughput:
		j.Parallel = p.ServeParallel
	case Parked:
		j.Parked = p.Parked
	}
	for _, f := range w.Feeds {
		if w.python() {
			j.Feeds = append(j.Feeds, SessionFeed{Python: f.Code + "\n" + f.Result, Block: f.Code,
				Result: f.Result, Answer: f.Answer})
			continue
		}
		stripped, err := transpile.Strip(f.Code)
		if err != nil {
			return Job{}, fmt.Errorf("bench: workload %s: a feed: %w", w.Name, err)
		}
		j.Feeds = append(j.Feeds, SessionFeed{TS: f.Code + "\nreturn (" + f.Result + ")", JS: stripped.JS,
			Result: f.Result, Answer: f.Answer})
	}
	if j.Tools == nil {
		j.Tools = []string{}
	}
	count := 1
	if w.NewEachRun() {
		count = j.Samples + 1
	}
	for i := first; i < first+count; i++ {
		prog, err := w.program(p, i, p.Calls)
		if err != nil {
			return Job{}, err
		}
		j.Programs = append(j.Programs, prog)
	}
	if w.Kind == PerCall {
		base, err := w.program(Params{Calls: 0, Iterations: p.Iterations}, 0, 0)
		if err != nil {
			return Job{}, err
		}
		j.Base = []Program{base}
	}
	if w.Twin != "" {
		tw, err := Lookup(w.Twin)
		if err != nil {
			return Job{}, fmt.Errorf("bench: workload %s: its twin: %w", w.Name, err)
		}
		tw.Twin = "" // not measured: only this job's twin is
		tj, err := tw.expand(p, first, samples)
		if err != nil {
			return Job{}, err
		}
		j.Twin = &tj
	}
	return j, nil
}

func (w Workload) program(p Params, i, calls int) (Program, error) {
	src := w.source(p, i, calls)
	answer := w.Answer(Params{Calls: calls, Iterations: p.Iterations}, i)
	if w.python() {
		return Program{Python: src, Answer: answer}, nil
	}
	stripped, err := transpile.Strip(src)
	if err != nil {
		return Program{}, fmt.Errorf("bench: workload %s: %w", w.Name, err)
	}
	return Program{TS: src, JS: stripped.JS, Answer: answer}, nil
}

// Raw is what an implementation measured for a job, in the kind's raw unit
// (Kind): Samples, and for PerCall Base (the runs without calls).
type Raw struct {
	Samples []float64 `json:"samples"`
	Base    []float64 `json:"base,omitempty"`
	Note    string    `json:"note,omitempty"`
	// Extra are figures beside the samples (Result.Extra).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// CheckAnswer compares the JSON a program returned with its answer
// (whitespace aside).
func CheckAnswer(p Program, got []byte) error {
	src, _ := p.Source()
	var buf bytes.Buffer
	if err := json.Compact(&buf, got); err != nil {
		return fmt.Errorf("wrong answer: %q is not JSON (program %q)", got, src)
	}
	if buf.String() != p.Answer {
		return fmt.Errorf("wrong answer: got %s, want %s (program %q)", got, p.Answer, src)
	}
	return nil
}
