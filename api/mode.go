package api

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

// ParseMode parses "native", "ptc" or "both" (INVALID_DEFINITION otherwise).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeNative, ModePTC, ModeBoth:
		return m, nil
	}
	return "", Errorf(CodeInvalidDefinition, "unknown mode %q: want native, ptc or both", s)
}

// String returns the mode's name.
func (m Mode) String() string { return string(m) }

// HasRunCode reports whether run_code exists under m (ptc and both).
func (m Mode) HasRunCode() bool { return m == ModePTC || m == ModeBoth }
