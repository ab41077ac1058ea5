package protocol

// Label is a data-flow label as the wire spells it (docs/security.md,
// "Data flow"): integrity "trusted" or "untrusted", confidentiality
// "public", "private" or "secret". A member left out (or empty) is the
// lowest in a tool's labels and the highest in what it accepts, as in a
// tools file. The server checks the levels (400 naming the field).
type Label struct {
	Integrity       string `json:"integrity,omitempty" yaml:"integrity,omitempty"`
	Confidentiality string `json:"confidentiality,omitempty" yaml:"confidentiality,omitempty"`
}

// Accepts is the most a call of a tool may carry, for the whole call and
// per top-level argument; OnViolation is "deny" (the default) or "ask".
type Accepts struct {
	Integrity       string           `json:"integrity,omitempty" yaml:"integrity,omitempty"`
	Confidentiality string           `json:"confidentiality,omitempty" yaml:"confidentiality,omitempty"`
	Args            map[string]Label `json:"args,omitempty" yaml:"args,omitempty"`
	OnViolation     string           `json:"on_violation,omitempty" yaml:"on_violation,omitempty"`
}
