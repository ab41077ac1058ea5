package serve

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/policy"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/serve/protocol"
	"github.com/ptcx/ptcx/toolsfile"
)

// Data flow in ptcx serve (docs/service.md, "Data flow"): where a tool's
// policy is declared, beside the tools file's own members. A client tool
// declares its own (ClientTool's members); a tenant's config may overlay
// the policy of the server's tools (TenantConfig.Policy), and an overlay
// only tightens (RATIONALE.md, "Why does a tenant's policy overlay only
// tighten?"). Both are read into a policy.Declaration here, checked in
// full (constraints compiled), and refused naming the tool and the member.

// maxClientConstraintBytes bounds the constraints of one request's client
// tools together: each is compiled (CEL) when the request is read and
// again when its registry is built, work the server does for any client
// with a key.
const maxClientConstraintBytes = 64 << 10

// ToolPolicy is the data-flow policy a tenant's config lays over one of
// the server's tools (TenantConfig.Policy): the members of a tools file's
// tool, but handle, which changes what a tool returns (an overlay only
// tightens). A client tool's policy is read through it too, with handle.
type ToolPolicy struct {
	Labels      *protocol.Label   `json:"labels,omitempty" yaml:"labels,omitempty"`
	Accepts     *protocol.Accepts `json:"accepts,omitempty" yaml:"accepts,omitempty"`
	Constraints []string          `json:"constraints,omitempty" yaml:"constraints,omitempty"`
	CallsPerRun int               `json:"calls_per_run,omitempty" yaml:"calls_per_run,omitempty"`
	Cost        int64             `json:"cost,omitempty" yaml:"cost,omitempty"`
	MaxCost     int64             `json:"max_cost,omitempty" yaml:"max_cost,omitempty"`
	// NeedsApproval puts every call of the tool to the approver (a person,
	// through POST /v1/executions/{id}/approvals); an overlay can add it,
	// never take it away.
	NeedsApproval bool `json:"needs_approval,omitempty" yaml:"needs_approval,omitempty"`
	// handle is a client tool's "handle" (clientPolicy); no config sets it.
	handle bool
}

// declaration reads p as policy reads a tools file's members, and checks
// it in full (constraints compiled). An error names the member.
func (p ToolPolicy) declaration() (policy.Declaration, error) {
	members := map[string]json.RawMessage{}
	put := func(name string, v any) {
		b, _ := json.Marshal(v) // plain strings and numbers: cannot fail
		members[name] = b
	}
	if p.Labels != nil {
		put("labels", p.Labels)
	}
	if p.Accepts != nil {
		put("accepts", p.Accepts)
	}
	if p.Constraints != nil {
		put("constraints", p.Constraints)
	}
	if p.CallsPerRun != 0 {
		put("calls_per_run", p.CallsPerRun)
	}
	if p.Cost != 0 {
		put("cost", p.Cost)
	}
	if p.MaxCost != 0 {
		put("max_cost", p.MaxCost)
	}
	if p.NeedsApproval {
		put("needs_approval", true)
	}
	if p.handle {
		put("handle", true)
	}
	d, err := policy.DecodeMembers(members)
	if err != nil {
		return policy.Declaration{}, err
	}
	if _, err := policy.Compile(d); err != nil {
		return policy.Declaration{}, err
	}
	return d, nil
}

// clientPolicy is a client tool's data-flow members.
func clientPolicy(t ClientTool) ToolPolicy {
	return ToolPolicy{Labels: t.Labels, Accepts: t.Accepts, Constraints: t.Constraints,
		CallsPerRun: t.CallsPerRun, Cost: t.Cost, MaxCost: t.MaxCost, NeedsApproval: t.NeedsApproval, handle: t.Handle}
}

// checkClientPolicies checks the data-flow members of a request's client
// tools: each in full, their constraints together within
// maxClientConstraintBytes.
func checkClientPolicies(tools []ClientTool) error {
	total := 0
	for i, t := range tools {
		for _, c := range t.Constraints {
			if total += len(c); total > maxClientConstraintBytes {
				return fmt.Errorf("field client_tools[%d] (%q).constraints: the client tools' constraints come to more than %d bytes together, the maximum for one request", i, t.Name, maxClientConstraintBytes)
			}
		}
		if _, err := clientPolicy(t).declaration(); err != nil {
			return fmt.Errorf("field client_tools[%d] (%q).%w", i, t.Name, err)
		}
	}
	return nil
}

// withClientPolicy sets tool's policy to its client tool's declaration
// (checked when its request was read: an error here is a parked
// execution's spec no request could have carried, which Register returns).
func withClientPolicy(tool registry.Tool, t ClientTool) registry.Tool {
	d, err := clientPolicy(t).declaration()
	if err != nil {
		tool.Err = fmt.Errorf("client tool %q: %w", t.Name, err)
		return tool
	}
	tool.Policy = d
	return tool
}

// checkOverlay checks a tenant's policy overlay's shape: each entry a
// well-formed tool name and a policy that reads and compiles. Whether the
// names are the server's tools is checked when the tenant is built
// (overlay.apply).
func checkOverlay(over map[string]ToolPolicy) error {
	for _, name := range slices.Sorted(maps.Keys(over)) {
		if !registry.ValidName(name) || name == registry.RunCode {
			return fmt.Errorf(".policy: %q is not a tool name a server's tool can have", name)
		}
		if _, err := over[name].declaration(); err != nil {
			return fmt.Errorf(".policy.%s.%w", name, err)
		}
	}
	return nil
}

// overlay is a tenant's policy overlay, read: the declaration laid over
// each named tool.
type overlay map[string]policy.Declaration

// newOverlay reads a tenant's checked overlay and checks that it names
// only the server's tools: the workspace's (ws, when the server has a
// workspace) and the tools file's.
func newOverlay(over map[string]ToolPolicy, wsTools []registry.Tool, file *toolsfile.File) (overlay, error) {
	if len(over) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	for _, t := range wsTools {
		known[t.Name] = true
	}
	if file != nil {
		for _, t := range file.Tools {
			known[t.Name] = true
		}
	}
	o := make(overlay, len(over))
	for _, name := range slices.Sorted(maps.Keys(over)) {
		if !known[name] {
			names := slices.Sorted(maps.Keys(known))
			return nil, fmt.Errorf("field policy.%s: the server has no tool %q (its tools: %v); a tenant's policy overlays the server's tools, and a client tool declares its own", name, name, names)
		}
		d, err := over[name].declaration()
		if err != nil {
			return nil, fmt.Errorf("field policy.%s.%w", name, err)
		}
		o[name] = d
	}
	for _, t := range wsTools {
		if d, ok := o[t.Name]; ok {
			if _, err := policy.Compile(tighten(t.Policy, d)); err != nil {
				return nil, fmt.Errorf("field policy.%s: with the tool's own policy: %w", t.Name, err)
			}
		}
	}
	if file != nil {
		for _, t := range file.Tools {
			if d, ok := o[t.Name]; ok {
				if _, err := policy.Compile(tighten(t.Policy, d)); err != nil {
					return nil, fmt.Errorf("field policy.%s: with the tool's own policy: %w", t.Name, err)
				}
			}
		}
	}
	return o, nil
}

// tools returns tools with the overlay laid over each it names.
func (o overlay) tools(tools []registry.Tool) []registry.Tool {
	if len(o) == 0 {
		return tools
	}
	out := slices.Clone(tools)
	for i, t := range out {
		if d, ok := o[t.Name]; ok {
			out[i].Policy = tighten(t.Policy, d)
		}
	}
	return out
}

// file returns a copy of f whose tools have the overlay laid over them.
func (o overlay) file(f *toolsfile.File) *toolsfile.File {
	if len(o) == 0 || f == nil {
		return f
	}
	c := *f
	c.Tools = slices.Clone(f.Tools)
	for i, t := range c.Tools {
		if d, ok := o[t.Name]; ok {
			c.Tools[i].Policy = tighten(t.Policy, d)
		}
	}
	return &c
}

// tighten lays over on base, so that the result is at least as strict as
// each: labels join (results are at least as untrusted and as
// confidential as either says); what a call may carry is the lower of the
// two, per argument too, and a violation is put to the approver only when
// neither says deny; constraints add up (all must hold); calls_per_run and
// max_cost are the lower of those given; cost the higher; needs_approval
// when either says so.
func tighten(base, over policy.Declaration) policy.Declaration {
	out := base
	if over.Labels != nil {
		l := *over.Labels
		if base.Labels != nil {
			l = base.Labels.Join(l)
		}
		out.Labels = &l
	}
	if over.Accepts != nil {
		out.Accepts = meetAccepts(base.Accepts, over.Accepts)
	}
	if len(over.Constraints) > 0 {
		out.Constraints = append(slices.Clip(base.Constraints), over.Constraints...)
	}
	out.CallsPerRun = lowerPositive(base.CallsPerRun, over.CallsPerRun)
	out.MaxCost = lowerPositive(base.MaxCost, over.MaxCost)
	out.Cost = max(base.Cost, over.Cost)
	out.NeedsApproval = base.NeedsApproval || over.NeedsApproval
	return out
}

// meetAccepts is what both a and b accept (a may be nil: anything).
func meetAccepts(a, b *policy.Accepts) *policy.Accepts {
	if a == nil {
		c := *b
		c.Args = maps.Clone(b.Args)
		return &c
	}
	out := &policy.Accepts{OnViolation: policy.Deny}
	if a.OnViolation == policy.Ask && b.OnViolation == policy.Ask {
		out.OnViolation = policy.Ask
	}
	switch {
	case a.Call == nil && b.Call == nil:
	case a.Call == nil:
		l := *b.Call
		out.Call = &l
	case b.Call == nil:
		l := *a.Call
		out.Call = &l
	default:
		l := meet(*a.Call, *b.Call)
		out.Call = &l
	}
	if len(a.Args)+len(b.Args) > 0 {
		out.Args = maps.Clone(a.Args)
		if out.Args == nil {
			out.Args = map[string]api.Label{}
		}
		names := slices.Collect(maps.Keys(b.Args))
		sort.Strings(names)
		for _, name := range names {
			if l, ok := out.Args[name]; ok {
				out.Args[name] = meet(l, b.Args[name])
			} else {
				out.Args[name] = b.Args[name]
			}
		}
	}
	return out
}

// meet is the lower of each member of two labels: what both accept.
func meet(a, b api.Label) api.Label {
	return api.Label{Integrity: min(a.Integrity, b.Integrity), Confidentiality: min(a.Confidentiality, b.Confidentiality)}
}

// lowerPositive is the lower of a and b where 0 (or less) is no bound.
func lowerPositive[T int | int64](a, b T) T {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
