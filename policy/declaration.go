package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ptcx/ptcx/api"
)

// Declaration is what a tool declares about data flow and its capabilities.
// The zero Declaration declares nothing: results labelled {trusted,
// public}, any call accepted, no constraint, no count, no cost; such a tool
// costs the executor nothing more than before.
//
// Its JSON members are those of a tool in a tools file (toolsfile), and
// unknown ones are refused:
//
//	"labels": {"integrity": "untrusted", "confidentiality": "private"},
//	"accepts": {"confidentiality": "private", "args": {"to": {"integrity": "trusted"}}, "on_violation": "ask"},
//	"handle": true,
//	"constraints": ["args.amount <= 1000"],
//	"calls_per_run": 1,
//	"cost": 5, "max_cost": 100,
//	"needs_approval": true
type Declaration struct {
	// Labels are joined into the label of every result of the tool (a
	// member left out of the JSON is the lowest: trusted, public).
	Labels *api.Label `json:"labels,omitempty"`
	// Accepts is the most a call of the tool may carry; nil accepts
	// anything.
	Accepts *Accepts `json:"accepts,omitempty"`
	// Handle makes the tool's successful results reach a program as
	// handles: opaque objects whose value stays with the host, which the
	// program passes to other tools or reads (and so joins their label
	// into its context) with text() and json() (docs/security.md,
	// "Handles").
	Handle bool `json:"handle,omitempty"`
	// Constraints are CEL expressions over args (the call's arguments,
	// decoded), each of which must be true for the call to proceed;
	// compiled once, at registration. At most MaxConstraints of at most
	// MaxConstraintBytes each.
	Constraints []string `json:"constraints,omitempty"`
	// CallsPerRun, when positive, is the most calls of this tool one
	// run_code execution may make (run_code's limits.max_calls caps all
	// its nested calls together).
	CallsPerRun int `json:"calls_per_run,omitempty"`
	// Cost is what one call of the tool costs, in units the host chooses;
	// the run's ledger adds them up.
	Cost int64 `json:"cost,omitempty"`
	// MaxCost, when positive, is the most an execution may have spent,
	// this call included, for a call of this tool to proceed.
	MaxCost int64 `json:"max_cost,omitempty"`
	// NeedsApproval puts every call of the tool to the approver
	// (executor.Config.WithApprover, or the call's:
	// executor.WithCallApprover), model-direct calls too, once its other
	// rules let it through; with no approver it is denied. A nested call
	// the run's approved plan covers needs no further approval
	// (executor.Call.Plan: the plan was the approval).
	NeedsApproval bool `json:"needs_approval,omitempty"`
}

// IsZero reports whether d declares nothing.
func (d Declaration) IsZero() bool {
	return d.Labels == nil && d.Accepts == nil && !d.Handle && len(d.Constraints) == 0 &&
		d.CallsPerRun == 0 && d.Cost == 0 && d.MaxCost == 0 && !d.NeedsApproval
}

// OnViolation is what happens to a call past what its tool accepts.
type OnViolation string

const (
	// Deny refuses the call (DENIED), the default.
	Deny OnViolation = "deny"
	// Ask puts the call to the approver (executor.Config.WithApprover, or
	// the call's: executor.WithCallApprover); with none, it is denied.
	Ask OnViolation = "ask"
)

// Accepts is the most a call of a tool may carry.
//
// In Go both members of a label are given (api.Top accepts anything); in
// JSON a member left out is the highest (untrusted, secret): {"integrity":
// "trusted"} accepts trusted data of any confidentiality.
type Accepts struct {
	// Call is the most the whole call may carry: the program's context
	// label joined with every argument's. Nil accepts anything.
	Call *api.Label
	// Args is the most each named top-level argument may carry.
	Args map[string]api.Label
	// OnViolation is Deny (also when empty) or Ask.
	OnViolation OnViolation
}

// UnmarshalJSON reads accepts strictly: "integrity", "confidentiality",
// "args" and "on_violation", nothing else.
func (a *Accepts) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return fmt.Errorf("accepts is an object {\"integrity\", \"confidentiality\", \"args\", \"on_violation\"}")
	}
	var out Accepts
	for _, k := range sortedKeys(raw) {
		v := raw[k]
		switch k {
		case "integrity", "confidentiality": // read below, together
		case "args":
			var args map[string]json.RawMessage
			if err := json.Unmarshal(v, &args); err != nil || args == nil {
				return fmt.Errorf("accepts.args is an object of argument names to labels")
			}
			out.Args = make(map[string]api.Label, len(args))
			for _, name := range sortedKeys(args) {
				l, err := parseLimit(args[name])
				if err != nil {
					return fmt.Errorf("accepts.args.%s: %w", name, err)
				}
				out.Args[name] = l
			}
		case "on_violation":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("accepts.on_violation is \"deny\" or \"ask\"")
			}
			out.OnViolation = OnViolation(s)
			if err := out.OnViolation.check(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("accepts has no member %q (it has integrity, confidentiality, args, on_violation)", k)
		}
	}
	_, hasI := raw["integrity"]
	_, hasC := raw["confidentiality"]
	if hasI || hasC {
		m := map[string]json.RawMessage{}
		if hasI {
			m["integrity"] = raw["integrity"]
		}
		if hasC {
			m["confidentiality"] = raw["confidentiality"]
		}
		call, _ := json.Marshal(m)
		l, err := parseLimit(call)
		if err != nil {
			return fmt.Errorf("accepts: %w", err)
		}
		out.Call = &l
	}
	*a = out
	return nil
}

// MarshalJSON writes accepts as the tools file has it.
func (a Accepts) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if a.Call != nil {
		if !a.Call.Valid() {
			return nil, fmt.Errorf("policy: accepts has an invalid label")
		}
		m["integrity"] = a.Call.Integrity.String()
		m["confidentiality"] = a.Call.Confidentiality.String()
	}
	if len(a.Args) > 0 {
		m["args"] = a.Args
	}
	if a.OnViolation != "" {
		m["on_violation"] = a.OnViolation
	}
	return json.Marshal(m)
}

func (o OnViolation) check() error {
	switch o {
	case "", Deny, Ask:
		return nil
	}
	return fmt.Errorf("accepts.on_violation %q is not \"deny\" or \"ask\"", string(o))
}

// parseLimit reads a label whose members left out are the highest.
func parseLimit(b []byte) (api.Label, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return api.Label{}, fmt.Errorf("a label is an object {\"integrity\": …, \"confidentiality\": …}")
	}
	l, err := api.ParseLabel(b)
	if err != nil {
		return api.Label{}, err
	}
	if _, ok := raw["integrity"]; !ok {
		l.Integrity = api.Top.Integrity
	}
	if _, ok := raw["confidentiality"]; !ok {
		l.Confidentiality = api.Top.Confidentiality
	}
	return l, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Members are the JSON members of a Declaration, as a tools file has them
// beside a tool's other members.
var Members = []string{"labels", "accepts", "handle", "constraints", "calls_per_run", "cost", "max_cost", "needs_approval"}

// DecodeMembers reads the members of a Declaration from the members of an
// object that has others too (a tools file's tool): those not in Members
// are left alone. Each is read strictly; an error names the member.
func DecodeMembers(members map[string]json.RawMessage) (Declaration, error) {
	var d Declaration
	for _, k := range Members {
		v, ok := members[k]
		if !ok {
			continue
		}
		var err error
		switch k {
		case "labels":
			var l api.Label
			if l, err = api.ParseLabel(v); err == nil {
				d.Labels = &l
			}
		case "accepts":
			var a Accepts
			if err = a.UnmarshalJSON(v); err == nil {
				d.Accepts = &a
			}
		case "handle":
			err = strictValue(v, &d.Handle)
		case "constraints":
			err = strictValue(v, &d.Constraints)
		case "calls_per_run":
			err = strictValue(v, &d.CallsPerRun)
		case "cost":
			err = strictValue(v, &d.Cost)
		case "max_cost":
			err = strictValue(v, &d.MaxCost)
		case "needs_approval":
			err = strictValue(v, &d.NeedsApproval)
		}
		if err != nil {
			if k == "accepts" { // its errors name their member already
				return Declaration{}, err
			}
			return Declaration{}, fmt.Errorf("%s: %w", k, err)
		}
	}
	return d, nil
}

func strictValue(b []byte, v any) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return fmt.Errorf("null is not a value here")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
