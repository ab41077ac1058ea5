package trace

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
)

// Recorder turns the executor's notifications into one Record per run_code
// execution, handed to a sink as each execution settles. It is safe for
// concurrent use: executions running at once are recorded apart, by call
// ID (so call IDs must be unique among executions in flight, as the
// executor's own are).
type Recorder struct {
	reg    *registry.Registry
	sink   func(Record)
	redact func(*Record)

	mu   sync.Mutex
	open map[string]*pending // by run_code call ID
}

// pending is a record being built.
type pending struct {
	base    time.Time // run_code's body start, the origin of offsets
	calls   []Call
	reads   []Read
	handles map[string]int // the index of the call answered with each handle, by ID
}

// NewRecorder returns a recorder of executions against reg (for the scope's
// mode) that hands every finished record to sink, on the goroutine that
// settled the execution: keep it fast, and safe for concurrent use.
func NewRecorder(reg *registry.Registry, sink func(Record)) *Recorder {
	return &Recorder{reg: reg, sink: sink, open: map[string]*pending{}}
}

// WithRedact sets a hook that sees every record before the sink does, to
// redact arguments, values, logs or results in place. A redacted record
// replays only where what it changed is not compared (see Replay). It
// returns r, and must be called before the recorder is installed.
func (r *Recorder) WithRedact(f func(*Record)) *Recorder {
	r.redact = f
	return r
}

// Install returns cfg with the recorder's hooks appended.
func (r *Recorder) Install(cfg executor.Config) executor.Config {
	return cfg.WithOnStart(r.onStart).WithOnResult(r.onResult).WithOnHandle(r.onHandle)
}

func (r *Recorder) get(id string, now time.Time) *pending {
	p := r.open[id]
	if p == nil {
		p = &pending{base: now}
		r.open[id] = p
	}
	return p
}

func (r *Recorder) onStart(s executor.Start) {
	if !s.Nested && s.Tool != registry.RunCode {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !s.Nested {
		r.get(s.ID, s.At).base = s.At
		return
	}
	p := r.get(s.Parent, s.At)
	c := p.call(s.Request)
	us := s.At.Sub(p.base).Microseconds()
	c.StartUS = &us
}

// call returns the call of req, added on first sight.
func (p *pending) call(req executor.Request) *Call {
	for i := range p.calls {
		if p.calls[i].ID == req.ID {
			return &p.calls[i]
		}
	}
	p.calls = append(p.calls, Call{Index: nestedIndex(req.ID), ID: req.ID, Parent: req.Parent, Tool: req.Tool, Args: req.Args})
	return &p.calls[len(p.calls)-1]
}

// nestedIndex is n in a nested call ID "<parent>:ptc:<n>", or 0.
func nestedIndex(id string) int {
	i := strings.LastIndex(id, ":ptc:")
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(id[i+len(":ptc:"):])
	return n
}

func (r *Recorder) onResult(n executor.Notification) {
	now := time.Now()
	if n.Nested {
		r.mu.Lock()
		p := r.get(n.Parent, now)
		c := p.call(n.Request)
		c.Completed = int(n.Seq) // the executor's completion order, from 1
		c.SettledUS = now.Sub(p.base).Microseconds()
		if c.StartUS != nil && n.Body > 0 {
			end := *c.StartUS + n.Body.Microseconds()
			c.EndUS = &end
		}
		c.OK = n.Result.OK()
		c.Value = n.Result.Value
		c.Error = errorOf(n.Result.Err)
		c.Labels = labelOf(n.Result.Labels)
		c.Raised = labelOf(n.Raised)
		c.Handles = nil
		for _, id := range n.Handles {
			c.Handles = append(c.Handles, Passed{ID: id, Call: p.handles[id]})
		}
		r.mu.Unlock()
		return
	}
	if n.Tool != registry.RunCode {
		return
	}
	r.mu.Lock()
	p := r.open[n.ID]
	delete(r.open, n.ID)
	r.mu.Unlock()
	rec := r.record(n, p)
	if r.redact != nil {
		r.redact(&rec)
	}
	r.sink(rec)
}

// onHandle records a call answered with a handle, and a handle read.
func (r *Recorder) onHandle(ev executor.HandleEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.get(ev.Parent, time.Now())
	h := ev.Handle
	switch ev.Kind {
	case executor.HandleMade:
		i := slices.IndexFunc(p.calls, func(c Call) bool { return c.ID == ev.Call })
		if i < 0 { // its result notification comes first; never here
			return
		}
		p.calls[i].Handle = &Handle{ID: h.ID, Tool: h.Tool, Size: h.Size, Labels: h.Labels}
		if p.handles == nil {
			p.handles = map[string]int{}
		}
		p.handles[h.ID] = p.calls[i].Index
	case executor.HandleRead:
		p.reads = append(p.reads, Read{Handle: h.ID, Call: p.handles[h.ID], As: ev.As, Labels: h.Labels})
	}
}

// policies are the declarations of the tools bound in scope that declare
// one; nil when none does.
func (r *Recorder) policies(scope string, tools []string) map[string]policy.Declaration {
	var out map[string]policy.Declaration
	for _, name := range tools {
		if d, ok := r.reg.Policy(scope, name); ok && !d.IsZero() {
			if out == nil {
				out = map[string]policy.Declaration{}
			}
			out[name] = d
		}
	}
	return out
}

// record builds the record of a settled run_code execution.
func (r *Recorder) record(n executor.Notification, p *pending) Record {
	var args struct {
		Code        string          `json:"code"`
		Language    string          `json:"language"`
		Description string          `json:"description"`
		Limits      json.RawMessage `json:"limits"`
	}
	_ = json.Unmarshal(n.Args, &args) // args that are no object fail run_code itself: the record says how
	rec := Record{Version: Version, ID: n.ID, Scope: n.Scope, Calls: []Call{}, Logs: []string{}, Text: n.Result.Text,
		Program: Program{SHA256: Hash(args.Code), Code: args.Code, Language: recordedLanguage(args.Language), Description: args.Description, Limits: args.Limits},
		Error:   errorOf(n.Result.Err), Outcome: outcomeOf(n.Result.Err), Labels: labelOf(n.Result.Labels)}
	if n.Run == nil && n.Result.Err != nil && n.Result.Err.Code == api.CodeInvalidArgs {
		rec.Program.Args = n.Args
	}
	if m, err := r.reg.Mode(n.Scope); err == nil {
		rec.Mode = m
	}
	if w := n.World; w != nil {
		seed := w.Seed
		rec.Seed = &seed
		if !w.Start.IsZero() {
			rec.ClockStart = w.Start.UTC().Format(time.RFC3339Nano)
		}
	}
	if p != nil {
		rec.Reads = p.reads
		rec.Calls = p.calls
		slices.SortStableFunc(rec.Calls, func(a, b Call) int { return a.Index - b.Index })
	}
	rec.Plan = planOf(n.Plan)
	rec.Tools = []string{}
	if run := n.Run; run != nil {
		if run.Plan != nil {
			rec.Plan = planOf(run.Plan) // what the run was bound to; also after a resume, which has no n.Plan
		}
		rec.Tools = slices.Clone(run.Tools)
		rec.Policies = r.policies(n.Scope, run.Tools)
		rec.Limits = limitsOf(run.Limits)
		rec.HandleOverBytes = run.HandleOver
		rec.Stats = &Stats{ComputeUS: run.Stats.Compute.Microseconds(), WallUS: run.Stats.Wall.Microseconds(),
			Calls: run.Stats.Calls, MemoryBytes: run.Stats.Memory, DurationUS: n.Duration.Microseconds()}
	}
	if n.Result.OK() {
		var v executor.RunCodeValue
		if json.Unmarshal(n.Result.Value, &v) == nil {
			rec.Result = v.Result
			if v.Logs != nil {
				rec.Logs = v.Logs
			}
		}
	} else if n.Result.Err.Logs != nil {
		rec.Logs = n.Result.Err.Logs
	}
	return rec
}

// recordedLanguage is the language a record keeps: none for TypeScript
// (records before languages read the same), else the name as given.
func recordedLanguage(name string) api.Language {
	if l, err := api.ParseLanguage(name); err == nil && l == api.LanguageTypeScript {
		return ""
	}
	return api.Language(name)
}
