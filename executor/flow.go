package executor

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
)

// Data flow (docs/security.md, "Data flow"): this file keeps the labels of
// one run_code execution and checks every nested call against what its
// tool declared (policy.Compiled). The pipeline reaches it at four points
// only: Dispatch takes the context label a call carries
// (scheduler.Dispatch), the policy phase checks the call (checkFlow,
// before the pre-execute listeners), finish labels the result
// (resultLabel), and the commit joins the result's label into the context
// as it answers the program (flow.deliver). With no tool declaring
// anything every label is the lowest and each point is a load and a
// compare.

// maxSources is the most tools an execution remembers as the sources of
// its context label: a denial names at most that many.
const maxSources = 16

// flow is the data-flow state of one run_code execution (its token's), or
// of a session between its programs.
type flow struct {
	label atomic.Uint32 // the context label, packed (pack)

	mu      sync.Mutex
	sources []source       // tools whose results raised the label, at most maxSources
	counts  map[string]int // calls per tool that passed its rules (calls_per_run)
	cost    int64          // the execution's cost so far (max_cost)
}

// source is a tool whose results raised a context label, and the join of
// their labels.
type source struct {
	tool  string
	label api.Label
}

func pack(l api.Label) uint32 { return uint32(l.Integrity)<<8 | uint32(l.Confidentiality) }

func unpack(v uint32) api.Label {
	return api.Label{Integrity: api.Integrity(v >> 8), Confidentiality: api.Confidentiality(v & 0xff)}
}

// context returns the context label.
func (f *flow) context() api.Label { return unpack(f.label.Load()) }

// deliver joins the label of a result delivered into the program, from
// tool, into the context label.
func (f *flow) deliver(tool string, l api.Label) {
	if l.IsZero() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.label.Store(pack(f.context().Join(l)))
	for i := range f.sources {
		if f.sources[i].tool == tool {
			f.sources[i].label = f.sources[i].label.Join(l)
			return
		}
	}
	if len(f.sources) < maxSources {
		f.sources = append(f.sources, source{tool: tool, label: l})
	}
}

// inherit makes f start where o left (a session's next program, a resumed
// or restored parked execution): its label, sources, counts and cost.
func (f *flow) inherit(o *flow) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.label.Store(o.label.Load())
	f.sources = slices.Clone(o.sources)
	f.cost = o.cost
	if o.counts != nil {
		f.counts = make(map[string]int, len(o.counts))
		for k, v := range o.counts {
			f.counts[k] = v
		}
	}
}

// raise joins what f carries into o, a session's record: labels only go
// up. Counts and cost are each execution's own and stay behind.
func (o *flow) raise(f *flow) {
	f.mu.Lock()
	l, srcs := f.context(), slices.Clone(f.sources)
	f.mu.Unlock()
	for _, s := range srcs {
		o.deliver(s.tool, s.label)
	}
	if !l.IsZero() {
		o.mu.Lock()
		o.label.Store(pack(o.context().Join(l)))
		o.mu.Unlock()
	}
}

// sourcesPast returns the tools whose labels are not within limit.
func (f *flow) sourcesPast(limit api.Label) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, s := range f.sources {
		if !s.label.Within(limit) {
			out = append(out, s.tool)
		}
	}
	return out
}

// charge counts a call of tool that passed its rules and adds its cost,
// unless calls_per_run or max_cost refuses it: then the rule that did,
// and nothing is counted.
func (f *flow) charge(tool string, p *policy.Compiled) (rule string, detail string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.counts[tool]
	if max := p.CallsPerRun(); max > 0 && n >= max {
		return "calls_per_run", fmt.Sprintf("%s may be called at most %d time(s) in one run_code execution, and this program already called it %d time(s)", tool, max, n)
	}
	if max := p.MaxCost(); max > 0 && f.cost+p.Cost() > max {
		return "max_cost", fmt.Sprintf("%s costs %d per call and may be called only while the execution's cost stays within %d; the execution has cost %d so far", tool, p.Cost(), max, f.cost)
	}
	if p.CallsPerRun() > 0 {
		if f.counts == nil {
			f.counts = make(map[string]int)
		}
		f.counts[tool] = n + 1
	}
	f.cost += p.Cost()
	return "", ""
}

// checkFlow is the data-flow part of the policy phase: the tool's
// constraints and needs_approval (every call), and for a nested call its
// calls_per_run, max_cost and what it accepts. It reports whether the call
// may go on, and the question to put to the approver when the tool says to
// ask (needs_approval, or on_violation: ask).
func (x *execution) checkFlow() (ask string, ok bool) {
	p := x.def.Policy()
	if p == nil {
		return "", true
	}
	tool := x.req.Tool
	if p.HasConstraints() {
		if failed, why := p.CheckConstraints(x.in.Map()); failed != "" {
			x.fail(&api.Error{Code: api.CodeDenied,
				Message: fmt.Sprintf("%s was refused: its constraint %q does not hold: %s", tool, failed, why),
				Policy:  &api.PolicyViolation{Rule: "constraints", Tool: tool, Constraint: failed}})
			return "", false
		}
	}
	if p.NeedsApproval() {
		x.flowAsk = &api.PolicyViolation{Rule: "needs_approval", Tool: tool}
		ask = tool + " needs approval: its declaration says needs_approval"
	}
	if !x.req.Nested {
		return ask, true
	}
	f := &x.parent.flow
	if v := x.labelViolation(p, f); v != nil {
		msg := x.describeFlow(v, f)
		if !p.Ask() {
			x.fail(&api.Error{Code: api.CodeDenied, Message: msg, Policy: v})
			return "", false
		}
		x.flowAsk = v // the flow says more than needs_approval would
		if ask != "" {
			msg = ask + "; " + msg
		}
		ask = msg
	}
	if rule, detail := f.charge(tool, p); rule != "" {
		x.fail(&api.Error{Code: api.CodeDenied, Message: detail, Policy: &api.PolicyViolation{Rule: rule, Tool: tool}})
		return "", false
	}
	x.cost = p.Cost()
	return ask, true
}

// labelViolation returns how the call's labels go past what its tool
// accepts, or nil. Every argument carries the context label the call was
// made with (x.ctxLabel); the whole call, the join of its arguments'.
func (x *execution) labelViolation(p *policy.Compiled, f *flow) *api.PolicyViolation {
	call := x.ctxLabel
	if x.handleIn != nil { // handles in its arguments: their labels on their arguments only (handles.go)
		call = call.Join(x.handleIn.label)
	}
	if args := p.AcceptsArgs(); len(args) > 0 {
		names := make([]string, 0, len(args))
		for name := range args {
			names = append(names, name)
		}
		sort.Strings(names)
		m := x.in.Map()
		for _, name := range names {
			if _, present := m[name]; !present {
				continue // nothing flows through an argument the call does not give
			}
			limit := args[name]
			if l := x.ctxLabel.Join(x.handleIn.argLabel(name)); !l.Within(limit) {
				return &api.PolicyViolation{Rule: "accepts.args", Tool: x.req.Tool, Argument: name, Label: &l, Accepts: &limit,
					Sources: x.sourcesPast(f, limit)}
			}
		}
	}
	if limit := p.AcceptsCall(); !call.Within(limit) {
		return &api.PolicyViolation{Rule: "accepts", Tool: x.req.Tool, Label: &call, Accepts: &limit, Sources: x.sourcesPast(f, limit)}
	}
	return nil
}

// sourcesPast is f.sourcesPast with the tools of the handles in the call's
// arguments, which are past limit when their labels are.
func (x *execution) sourcesPast(f *flow, limit api.Label) []string {
	out := f.sourcesPast(limit)
	if x.handleIn != nil && !x.handleIn.label.Within(limit) {
		for _, t := range x.handleIn.sources {
			if !containsString(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// flowMessage says which flow a call was refused for, for the model and
// the user.
func flowMessage(v *api.PolicyViolation) string {
	var b strings.Builder
	what := "the call"
	if v.Argument != "" {
		what = fmt.Sprintf("argument %q", v.Argument)
	}
	fmt.Fprintf(&b, "%s may not receive %s data in %s: it accepts %s at most", v.Tool, past(*v.Label, *v.Accepts), what, v.Accepts)
	if len(v.Sources) > 0 {
		fmt.Fprintf(&b, "; this program's data is %s because it read the results of %s", v.Label, strings.Join(v.Sources, ", "))
	} else {
		fmt.Fprintf(&b, "; this program's data is %s", v.Label)
	}
	b.WriteString(" (every call a program makes after reading a result carries that result's label)")
	return b.String()
}

// past names the levels of l above limit: "untrusted", "secret",
// "untrusted, secret".
func past(l, limit api.Label) string {
	var parts []string
	if l.Integrity > limit.Integrity {
		parts = append(parts, l.Integrity.String())
	}
	if l.Confidentiality > limit.Confidentiality {
		parts = append(parts, l.Confidentiality.String())
	}
	return strings.Join(parts, ", ")
}

// resultLabel is the label of x's result: its tool's declared labels
// joined with the call's (the context label it was made with), and with
// what the body said of this result (api.Output.Labels), which can only
// raise it. run_code's is its program's context label at the end.
func (x *execution) resultLabel(ok bool) api.Label {
	if x.def == nil {
		return x.ctxLabel
	}
	if x.def.Transport() {
		return x.runLabel
	}
	l := x.ctxLabel
	if x.handleIn != nil { // data that flowed in through handles flows out (handles.go)
		l = l.Join(x.handleIn.label)
	}
	if p := x.def.Policy(); p != nil {
		l = l.Join(p.Labels())
	}
	if ok {
		if !x.out.Labels.Valid() { // a body's label no level names: the highest, never lower
			return api.Top
		}
		l = l.Join(x.out.Labels)
	}
	return l
}

// parked returns f as a parked execution's header carries it; nil when
// there is nothing to carry.
func (f *flow) parked() *parkedFlow {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.context()
	if l.IsZero() && len(f.sources) == 0 && len(f.counts) == 0 && f.cost == 0 {
		return nil
	}
	p := &parkedFlow{Label: l, Cost: f.cost}
	for _, s := range f.sources {
		p.Sources = append(p.Sources, parkedSource{Tool: s.tool, Label: s.label})
	}
	if len(f.counts) > 0 {
		p.Counts = make(map[string]int, len(f.counts))
		for k, v := range f.counts {
			p.Counts[k] = v
		}
	}
	return p
}

// check refuses a parked flow no execution could have had.
func (p *parkedFlow) check() error {
	if p == nil {
		return nil
	}
	if !p.Label.Valid() || p.Cost < 0 || len(p.Sources) > maxSources {
		return errors.New("its data-flow state is out of range")
	}
	for _, s := range p.Sources {
		if !s.Label.Valid() || s.Tool == "" {
			return errors.New("its data-flow state names a source without a tool or label")
		}
	}
	for _, n := range p.Counts {
		if n < 0 {
			return errors.New("its data-flow state has a negative count")
		}
	}
	return nil
}

// restore sets a fresh f from a parked header's flow.
func (f *flow) restore(p *parkedFlow) {
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.label.Store(pack(p.Label))
	for _, s := range p.Sources {
		f.sources = append(f.sources, source{tool: s.Tool, label: s.Label})
	}
	f.cost = p.Cost
	if len(p.Counts) > 0 {
		f.counts = make(map[string]int, len(p.Counts))
		for k, v := range p.Counts {
			f.counts[k] = v
		}
	}
}
