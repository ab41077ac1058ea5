package trace

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/text"
)

// Divergence is the first place a replayed program did something its trace
// does not say: it called another tool, with other arguments, more calls
// than the trace has, or fewer; or a call's label or data-flow denial,
// recomputed from the declarations, is not the record's (trace/flow.go);
// or it was answered with a handle where the record has a value (or the
// reverse), passed other handles, or read others (trace/handles.go).
type Divergence struct {
	// Index is the call, from 1, in submission order.
	Index int `json:"index"`
	// Reason is "tool", "args", "extra call", "missing call", "labels",
	// "policy", "handle", "handles" or "read".
	Reason string `json:"reason"`
	// ExpectedTool and ExpectedArgs are the trace's call (empty for an
	// extra call); GotTool and GotArgs the program's (empty for a missing
	// call).
	ExpectedTool string          `json:"expected_tool,omitempty"`
	ExpectedArgs json.RawMessage `json:"expected_args,omitempty"`
	GotTool      string          `json:"got_tool,omitempty"`
	GotArgs      json.RawMessage `json:"got_args,omitempty"`
	// ExpectedLabels and GotLabels are the call's result labels
	// ("labels"); ExpectedPolicy and GotPolicy its denials, nil for none
	// ("policy").
	ExpectedLabels *api.Label           `json:"expected_labels,omitempty"`
	GotLabels      *api.Label           `json:"got_labels,omitempty"`
	ExpectedPolicy *api.PolicyViolation `json:"expected_policy,omitempty"`
	GotPolicy      *api.PolicyViolation `json:"got_policy,omitempty"`
	// ExpectedHandle and GotHandle say whether the call answered the
	// program with a handle ("handle").
	ExpectedHandle bool `json:"expected_handle,omitempty"`
	GotHandle      bool `json:"got_handle,omitempty"`
	// ExpectedHandles and GotHandles are the calls whose handles the call
	// was passed in its arguments ("handles").
	ExpectedHandles []int `json:"expected_handles,omitempty"`
	GotHandles      []int `json:"got_handles,omitempty"`
	// Read is the place, from 1, of the handle read that departed
	// ("read"; Index is then the call whose handle was, or was to be,
	// read); ExpectedRead and GotRead the record's and the program's, nil
	// for none (the tools and arguments are those of the calls that made
	// the handles).
	Read         int   `json:"read,omitempty"`
	ExpectedRead *Read `json:"expected_read,omitempty"`
	GotRead      *Read `json:"got_read,omitempty"`
}

// shownArgBytes is how much of each call's arguments Error shows.
const shownArgBytes = 300

func (d *Divergence) Error() string {
	switch d.Reason {
	case "labels":
		return fmt.Sprintf("replay diverged at call %d (labels): %s returned a result labelled %s in the trace, %s in the replay",
			d.Index, shownCall(d.GotTool, d.GotArgs), d.ExpectedLabels, d.GotLabels)
	case "policy":
		return fmt.Sprintf("replay diverged at call %d (policy): %s was %s in the trace, %s in the replay",
			d.Index, shownCall(d.GotTool, d.GotArgs), denial(d.ExpectedPolicy), denial(d.GotPolicy))
	case "handle":
		return fmt.Sprintf("replay diverged at call %d (handle): %s answered the program with %s in the trace, with %s in the replay",
			d.Index, shownCall(d.GotTool, d.GotArgs), answerKind(d.ExpectedHandle), answerKind(d.GotHandle))
	case "handles":
		return fmt.Sprintf("replay diverged at call %d (handles): %s was passed %s in the trace, %s in the replay",
			d.Index, shownCall(d.GotTool, d.GotArgs), callsText(d.ExpectedHandles), callsText(d.GotHandles))
	case "read":
		got := readText(d.GotRead, d.GotTool, d.GotArgs)
		if d.GotRead == nil {
			got = "no read (the program settled)"
		}
		return fmt.Sprintf("replay diverged at read %d of a handle (read): expected %s, got %s", d.Read,
			readText(d.ExpectedRead, d.ExpectedTool, d.ExpectedArgs), got)
	}
	expected, got := "no call", "no call (the program settled)"
	if d.ExpectedTool != "" {
		expected = shownCall(d.ExpectedTool, d.ExpectedArgs)
	}
	if d.GotTool != "" {
		got = shownCall(d.GotTool, d.GotArgs)
	}
	return fmt.Sprintf("replay diverged at call %d (%s): expected %s, got %s", d.Index, d.Reason, expected, got)
}

// answerKind names how a call answered the program.
func answerKind(handle bool) string {
	if handle {
		return "a handle"
	}
	return "its value"
}

// denial says whether and by which rule a call was refused.
func denial(p *api.PolicyViolation) string {
	if p == nil {
		return "not refused by a data-flow rule"
	}
	return "refused by " + p.Rule + " of " + p.Tool
}

func shownCall(tool string, args json.RawMessage) string {
	s := string(args)
	if len(s) > shownArgBytes {
		s = s[:text.Boundary(s, shownArgBytes)] + "…"
	}
	return "tools." + tool + "(" + s + ")"
}

// sameJSON reports whether two JSON texts are equal but for insignificant
// whitespace.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
