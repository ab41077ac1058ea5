package wasmhost

import (
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// Levels of the log import, and the prefix each puts before its line.
var logPrefixes = [...]string{
	0: "",         // console.log
	1: "",         // console.info
	2: "",         // console.debug
	3: "[warn] ",  // console.warn
	4: "[error] ", // console.error
}

// guestError is the JSON the guest passes to the error import.
type guestError struct {
	Kind    api.Kind `json:"kind"`
	Message string   `json:"message"`
	Stack   string   `json:"stack,omitempty"`
	Line    int      `json:"line,omitempty"`
	Column  int      `json:"column,omitempty"`
}

// decodeGuestError parses and checks the error import's JSON.
func decodeGuestError(b []byte) (*RunError, error) {
	var g guestError
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("error JSON: %w", err)
	}
	switch g.Kind {
	case api.KindException, api.KindSyntax, api.KindMemory, api.KindInvalidOutput:
	default:
		return nil, fmt.Errorf("error JSON: unknown kind %q", g.Kind)
	}
	if g.Message == "" {
		return nil, fmt.Errorf("error JSON: empty message")
	}
	if g.Line < 0 || g.Column < 0 {
		return nil, fmt.Errorf("error JSON: negative location %d:%d", g.Line, g.Column)
	}
	return &RunError{Kind: g.Kind, Message: g.Message, Stack: g.Stack, Line: g.Line, Column: g.Column}, nil
}
