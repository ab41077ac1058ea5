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
// recomputed from the declarations, is not the record's (trace/flow.go).
type Divergence struct {
	// Index is the call, from 1, in submission order.
	Index int `json:"index"`
	// Reason is "tool", "args", "extra call", "missing call", "labels"
	// or "policy".
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
