package registry

import "fmt"

// Mode decides what a scope advertises and what a model may call directly.
type Mode string

const (
	// ModeNative advertises every visible tool; run_code does not exist.
	ModeNative Mode = "native"
	// ModePTC advertises only run_code, and a model-direct call may only
	// name run_code: every other tool is reachable only from a program.
	ModePTC Mode = "ptc"
	// ModeBoth advertises every visible tool plus run_code; both routes work.
	ModeBoth Mode = "both"
)

// ParseMode parses "native", "ptc" or "both".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeNative, ModePTC, ModeBoth:
		return m, nil
	}
	return "", Errorf(CodeInvalidDefinition, "unknown mode %q: want native, ptc or both", s)
}

// String returns the mode's name.
func (m Mode) String() string { return string(m) }

// valid reports whether m is one of the three modes.
func (m Mode) valid() bool {
	_, err := ParseMode(string(m))
	return err == nil
}

func (m Mode) hasRunCode() bool { return m == ModePTC || m == ModeBoth }

// Restriction narrows the tools a scope inherits from its parent. It never
// touches the tools registered on the scope itself.
type Restriction struct {
	// Allow, when non-nil, keeps only these inherited tools.
	Allow []string `json:"allow,omitempty"`
	// Deny removes these inherited tools.
	Deny []string `json:"deny,omitempty"`
}

func (r Restriction) String() string {
	return fmt.Sprintf("allow=%v deny=%v", r.Allow, r.Deny)
}
