package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Integrity says how far data can be trusted to say what it means: data a
// tool declared trusted (the host's own, the user's), or data anyone could
// have written (an email, a web page), which may carry instructions.
// Trusted < Untrusted.
type Integrity uint8

// Confidentiality says who may see data. Public < Private < Secret.
type Confidentiality uint8

const (
	Trusted Integrity = iota
	Untrusted
)

const (
	Public Confidentiality = iota
	Private
	Secret
)

var (
	integrityNames       = [...]string{Trusted: "trusted", Untrusted: "untrusted"}
	confidentialityNames = [...]string{Public: "public", Private: "private", Secret: "secret"}
)

// String returns "trusted" or "untrusted".
func (i Integrity) String() string {
	if int(i) < len(integrityNames) {
		return integrityNames[i]
	}
	return fmt.Sprintf("integrity(%d)", uint8(i))
}

// String returns "public", "private" or "secret".
func (c Confidentiality) String() string {
	if int(c) < len(confidentialityNames) {
		return confidentialityNames[c]
	}
	return fmt.Sprintf("confidentiality(%d)", uint8(c))
}

// ParseIntegrity reads "trusted" or "untrusted".
func ParseIntegrity(s string) (Integrity, error) {
	for i, n := range integrityNames {
		if s == n {
			return Integrity(i), nil
		}
	}
	return 0, fmt.Errorf("integrity %q is not one of trusted, untrusted", s)
}

// ParseConfidentiality reads "public", "private" or "secret".
func ParseConfidentiality(s string) (Confidentiality, error) {
	for i, n := range confidentialityNames {
		if s == n {
			return Confidentiality(i), nil
		}
	}
	return 0, fmt.Errorf("confidentiality %q is not one of public, private, secret", s)
}

// Label is what the executor knows of where data came from: its integrity
// and its confidentiality (docs/security.md, "Data flow"). The zero Label
// is the lowest, {trusted, public}: data nobody declared anything about.
// Labels only go up as data flows: Join takes the higher of each.
//
// Its JSON form is {"integrity": "trusted", "confidentiality": "public"};
// a member left out is the lowest.
type Label struct {
	Integrity       Integrity
	Confidentiality Confidentiality
}

// Join returns the least label at or above both l and o: the higher
// integrity (untrusted wins) and the higher confidentiality (secret wins).
func (l Label) Join(o Label) Label {
	return Label{Integrity: max(l.Integrity, o.Integrity), Confidentiality: max(l.Confidentiality, o.Confidentiality)}
}

// Within reports whether l is at or below limit in both integrity and
// confidentiality: whether data labelled l may go where limit is the most
// that is accepted.
func (l Label) Within(limit Label) bool {
	return l.Integrity <= limit.Integrity && l.Confidentiality <= limit.Confidentiality
}

// IsZero reports whether l is the lowest label, {trusted, public}.
func (l Label) IsZero() bool { return l == Label{} }

// Valid reports whether both members are known levels.
func (l Label) Valid() bool {
	return int(l.Integrity) < len(integrityNames) && int(l.Confidentiality) < len(confidentialityNames)
}

// String returns "trusted, public" style text, as messages name a label.
func (l Label) String() string { return l.Integrity.String() + ", " + l.Confidentiality.String() }

// Top is the highest label, {untrusted, secret}: what a tool accepts when
// it declares no limit.
var Top = Label{Integrity: Untrusted, Confidentiality: Secret}

type labelJSON struct {
	Integrity       string `json:"integrity,omitempty"`
	Confidentiality string `json:"confidentiality,omitempty"`
}

// MarshalJSON writes both members.
func (l Label) MarshalJSON() ([]byte, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("api: invalid label %v", l)
	}
	return json.Marshal(labelJSON{Integrity: l.Integrity.String(), Confidentiality: l.Confidentiality.String()})
}

// UnmarshalJSON reads a label strictly: an object with at most the members
// integrity and confidentiality, each a known level (a member left out is
// the lowest). Anything else is an error naming what is wrong.
func (l *Label) UnmarshalJSON(b []byte) error {
	got, err := ParseLabel(b)
	if err != nil {
		return err
	}
	*l = got
	return nil
}

// ParseLabel reads a label's JSON form strictly (Label.UnmarshalJSON).
func ParseLabel(b []byte) (Label, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var j labelJSON
	if err := d.Decode(&j); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return Label{}, fmt.Errorf("a label has only the members integrity and confidentiality, not %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return Label{}, fmt.Errorf("a label is an object {\"integrity\": …, \"confidentiality\": …}: %w", err)
	}
	if d.More() {
		return Label{}, fmt.Errorf("a label is one JSON object; more follows it")
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return Label{}, fmt.Errorf("a label is an object {\"integrity\": …, \"confidentiality\": …}, not null")
	}
	var (
		l   Label
		err error
	)
	if j.Integrity != "" {
		if l.Integrity, err = ParseIntegrity(j.Integrity); err != nil {
			return Label{}, err
		}
	}
	if j.Confidentiality != "" {
		if l.Confidentiality, err = ParseConfidentiality(j.Confidentiality); err != nil {
			return Label{}, err
		}
	}
	return l, nil
}

// PolicyViolation is the flow a DENIED call was refused for, when a data
// flow rule refused it (Error.Policy): which rule, of which tool, on which
// argument, the label the call carried there, and the tools that label
// came from.
type PolicyViolation struct {
	// Rule is the rule that refused the call: "accepts" (the whole
	// call's label), "accepts.args" (one argument's), "constraints",
	// "calls_per_run", "max_cost", "needs_approval" (the tool declared
	// it and the approver did not approve the call), or "plan" (the run's
	// approved plan does not cover the call: docs/architecture.md, "Plans").
	Rule string `json:"rule"`
	// Tool is the tool called.
	Tool string `json:"tool"`
	// Argument is the argument of an "accepts.args" refusal.
	Argument string `json:"argument,omitempty"`
	// Label is what the call (or the argument) carried, and Accepts the
	// most the rule accepts; both zero for rules that are not about
	// labels.
	Label   *Label `json:"label,omitempty"`
	Accepts *Label `json:"accepts,omitempty"`
	// Sources are the tools whose results raised the label past what is
	// accepted, as far as the executor kept them (at most 16).
	Sources []string `json:"sources,omitempty"`
	// Constraint is the expression that did not hold ("constraints").
	Constraint string `json:"constraint,omitempty"`
}
