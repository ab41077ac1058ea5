package plan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/ptcx/ptcx/api"
)

// Bound is a run bound to an approved plan: the intersection of the plan
// the program's own text gives (read again by the host, never taken from
// the caller) and the approved document. Admit decides each nested call.
// It is safe for concurrent use.
type Bound struct {
	hash    string
	dynamic bool
	tools   map[string]bool
	sites   map[string][]Call    // by tool, when not dynamic
	labels  map[string]api.Label // by tool: the most its calls can carry, as the plan showed it (Carries)

	mu       sync.Mutex
	assigned map[string][]int            // per tool and site: the admitted call using it, or -1
	made     map[string][]map[string]any // per tool: the admitted calls' arguments, by admission number
}

// MismatchError is a plan approved for another program.
type MismatchError struct {
	Plan    string // the approved plan's hash
	Program string // the program's
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("the plan %s was made from another program (this program's hash is %s); read this program's plan and have it approved",
		short(e.Plan), short(e.Program))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// Bind binds a run to approved, given read, the plan of the program the
// run is about to run (Read, with the tools bound to the run). It fails
// with *MismatchError when approved was made from another program.
// Whatever approved says, the result allows no more than read does: a tool
// it lists is allowed only if read lists it, a call site only if read has
// a site of the same tool on the same line (with the approver's repeats
// when false), and a dynamic read stays dynamic.
func Bind(read, approved *Plan) (*Bound, error) {
	if approved.Hash != read.Hash {
		return nil, &MismatchError{Plan: approved.Hash, Program: read.Hash}
	}
	b := &Bound{hash: read.Hash, dynamic: read.Dynamic, tools: map[string]bool{}, sites: map[string][]Call{},
		labels: map[string]api.Label{}, assigned: map[string][]int{}, made: map[string][]map[string]any{}}
	defer b.boundLabels(read)
	readTools := map[string]bool{}
	for _, t := range read.Tools {
		readTools[t] = true
	}
	for _, t := range approved.Tools {
		if readTools[t] {
			b.tools[t] = true
		}
	}
	if b.dynamic {
		return b, nil
	}
	used := make([]bool, len(approved.Calls))
	for _, c := range read.Calls {
		if !b.tools[c.Tool] {
			continue
		}
		for i, a := range approved.Calls {
			if used[i] || a.Tool != c.Tool || a.Line != c.Line {
				continue
			}
			used[i] = true
			c.Repeats = c.Repeats && a.Repeats
			b.sites[c.Tool] = append(b.sites[c.Tool], c)
			break
		}
	}
	for t := range b.tools {
		if len(b.sites[t]) == 0 {
			delete(b.tools, t) // approved, but every site of it was removed
		}
	}
	for t, s := range b.sites {
		b.assigned[t] = slices.Repeat([]int{-1}, len(s))
	}
	return b, nil
}

// boundLabels sets, for each allowed tool, the most its calls can carry as
// read (annotated: Annotate) shows it: the join of its kept sites' bounds,
// or the plan's when it is dynamic. A site without a bound (a plan read
// without declarations) bounds nothing: the highest label.
func (b *Bound) boundLabels(read *Plan) {
	for t := range b.tools {
		if b.dynamic {
			b.labels[t] = orTop(read.Labels)
			continue
		}
		var l api.Label
		for _, c := range b.sites[t] {
			l = l.Join(orTop(c.Labels))
		}
		b.labels[t] = l
	}
}

func orTop(l *api.Label) api.Label {
	if l == nil {
		return api.Top
	}
	return *l
}

// Carries reports whether a call of tool carrying l stays within what the
// plan showed its calls can carry. A call the plan covers that carries
// more (a body raised a result's label: api.Output.Labels) was not what
// the approver saw, so the executor puts it to the approver as if no plan
// covered it.
func (b *Bound) Carries(tool string, l api.Label) bool {
	limit, ok := b.labels[tool]
	return ok && l.Within(limit)
}

// Plan returns what b allows as a plan document: its hash, whether it is
// dynamic, the tools it allows and the call sites it keeps (sorted by line,
// then tool). Bound to a fresh reading of the same program (Bind), it
// allows what b allows: a trace records it, so that a replay is bound as
// the run was, also a run resumed from parked bytes, which keep b's state
// but not the approved document.
func (b *Bound) Plan() *Plan {
	p := &Plan{Hash: b.hash, Dynamic: b.dynamic, Tools: make([]string, 0, len(b.tools)), Calls: []Call{}}
	for t := range b.tools {
		p.Tools = append(p.Tools, t)
		for _, c := range b.sites[t] {
			p.Calls = append(p.Calls, Call{Tool: c.Tool, Args: c.Args, Computed: c.Computed, Repeats: c.Repeats, Line: c.Line})
		}
	}
	sort.Strings(p.Tools)
	sort.SliceStable(p.Calls, func(i, j int) bool {
		if p.Calls[i].Line != p.Calls[j].Line {
			return p.Calls[i].Line < p.Calls[j].Line
		}
		return p.Calls[i].Tool < p.Calls[j].Tool
	})
	return p
}

// Clone returns a copy of b with its admitted calls, which admits calls
// without changing b: a host asking whether calls would be admitted, in
// order, before they are made (the executor's check before it parks).
func (b *Bound) Clone() *Bound {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := &Bound{hash: b.hash, dynamic: b.dynamic, tools: b.tools, sites: b.sites, labels: b.labels,
		assigned: make(map[string][]int, len(b.assigned)), made: make(map[string][]map[string]any, len(b.made))}
	for t, a := range b.assigned {
		c.assigned[t] = slices.Clone(a)
	}
	for t, m := range b.made {
		c.made[t] = slices.Clip(m)
	}
	return c
}

// Hash is the hash of the program the run is bound to.
func (b *Bound) Hash() string { return b.hash }

// Admit decides a nested call of tool with args (JSON text): nil, or why
// the approved plan does not cover it. A call is covered when its tool is
// allowed and, unless the plan is dynamic, it fits a call site of the tool
// (the site's literal arguments, and no member the site does not name
// unless the site's arguments are opaque), and, when no site of the tool
// repeats, a site no earlier admitted call needs. A refused call uses no
// site.
func (b *Bound) Admit(tool string, args json.RawMessage) error {
	if !b.tools[tool] {
		return fmt.Errorf("the approved plan does not allow %s", tool)
	}
	if b.dynamic {
		return nil
	}
	var got map[string]any
	if err := json.Unmarshal(args, &got); err != nil {
		got = nil
	}
	sites := b.sites[tool]
	fits := make([]bool, len(sites))
	fitsOne := false
	for i, s := range sites {
		fits[i] = fitsSite(s, got)
		if fits[i] && s.Repeats {
			return nil // a site that repeats takes any number of calls
		}
		fitsOne = fitsOne || fits[i]
	}
	if !fitsOne {
		return fmt.Errorf("no call site of %s in the approved plan has these arguments", tool)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Each call that does not repeat needs a site of its own: find one by
	// an augmenting path, moving earlier calls to other sites they fit.
	made := b.made[tool]
	n := len(made)
	fit := func(call, site int) bool {
		if call == n {
			return fits[site]
		}
		return fitsSite(sites[site], made[call])
	}
	assigned := slices.Clone(b.assigned[tool])
	var try func(call int, seen []bool) bool
	try = func(call int, seen []bool) bool {
		for s := range sites {
			if seen[s] || sites[s].Repeats || !fit(call, s) {
				continue
			}
			seen[s] = true
			if assigned[s] < 0 || try(assigned[s], seen) {
				assigned[s] = call
				return true
			}
		}
		return false
	}
	if !try(n, make([]bool, len(sites))) {
		return fmt.Errorf("the approved plan allows %s %s, and it was made that many times already", tool, times(len(sites)))
	}
	b.assigned[tool] = assigned
	b.made[tool] = append(made, got)
	return nil
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// fitsSite reports whether arguments got (nil: not an object) fit site s.
func fitsSite(s Call, got map[string]any) bool {
	opaque := slices.Contains(s.Computed, Opaque)
	if got == nil {
		return opaque && len(s.Args) == 0
	}
	for k, lit := range s.Args {
		v, ok := got[k]
		if !ok {
			return false
		}
		var want any
		if json.Unmarshal(lit, &want) != nil || !reflect.DeepEqual(v, want) {
			return false
		}
	}
	if opaque {
		return true
	}
	for k := range got {
		if _, ok := s.Args[k]; !ok && !slices.Contains(s.Computed, k) {
			return false
		}
	}
	return true
}

// boundJSON is a Bound's state, as a parked run keeps it (executor's
// parked bytes): what it allows, and the calls it admitted.
type boundJSON struct {
	Hash     string                      `json:"hash"`
	Dynamic  bool                        `json:"dynamic"`
	Tools    []string                    `json:"tools"`
	Sites    map[string][]Call           `json:"sites"`
	Labels   map[string]api.Label        `json:"labels,omitempty"`
	Assigned map[string][]int            `json:"assigned"`
	Made     map[string][]map[string]any `json:"made"`
}

// MarshalJSON returns b's state, admitted calls included.
func (b *Bound) MarshalJSON() ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	j := boundJSON{Hash: b.hash, Dynamic: b.dynamic, Tools: []string{}, Sites: b.sites, Labels: b.labels, Assigned: b.assigned, Made: b.made}
	for t := range b.tools {
		j.Tools = append(j.Tools, t)
	}
	sort.Strings(j.Tools)
	return json.Marshal(j)
}

// RestoreBound returns the Bound whose state MarshalJSON returned. The
// bytes are the host's own (a parked run's); they are checked for shape
// only.
func RestoreBound(data []byte) (*Bound, error) {
	var j boundJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("plan: a bound plan's state: %w", err)
	}
	b := &Bound{hash: j.Hash, dynamic: j.Dynamic, tools: map[string]bool{}, sites: map[string][]Call{},
		labels: map[string]api.Label{}, assigned: map[string][]int{}, made: map[string][]map[string]any{}}
	for _, t := range j.Tools {
		b.tools[t] = true
	}
	for t, l := range j.Labels { // state parked before bounds were kept has none: every call is asked
		if !l.Valid() {
			return nil, fmt.Errorf("plan: a bound plan's state: an invalid label bound of %s", t)
		}
		b.labels[t] = l
	}
	for t, s := range j.Sites {
		a := j.Assigned[t]
		if len(a) != len(s) {
			return nil, fmt.Errorf("plan: a bound plan's state: %d sites of %s but %d assignments", len(s), t, len(a))
		}
		for _, c := range a {
			if c < -1 || c >= len(j.Made[t]) {
				return nil, fmt.Errorf("plan: a bound plan's state: an assignment of %s out of range", t)
			}
		}
		b.sites[t], b.assigned[t], b.made[t] = s, a, j.Made[t]
	}
	return b, nil
}
