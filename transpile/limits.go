package transpile

import (
	"errors"
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// MaxSourceBytes bounds the program Strip accepts, checked before anything
// reads it: api.MaxCodeBytes, whose comment says why it is this size.
const MaxSourceBytes = api.MaxCodeBytes

// MaxNesting bounds how deep a program nests, in the pre-check's levels
// (one per open bracket, prefix or postfix operator, right-associative
// operator, statement keyword, label or comma in an expression; see
// check.go). esbuild parses, visits and prints recursively, at about 5 KiB
// of goroutine stack per level for the costliest constructs: 200,000 levels
// overflow the stack, which kills the process, and 100,000 take about 900
// MB. At 1,000 levels the whole process peaks under 25 MB. Real programs
// measured (esbuild's own TypeScript and JavaScript, up to 350 KB) reach 105.
const MaxNesting = 1000

// The pre-check also bounds estimates of the work where esbuild is
// super-linear, in units calibrated (esbuild v0.28.2, on the 2-core
// development machine under load) so that the costliest program each budget
// admits takes at most about half a second of host CPU and 64 MB of memory.
// Without them, 1.5 KB of nested arrows took 3 s, 43 KB of numbered names 8
// s, and 160 KB of string concatenation 1.6 GB. esbuild's own 216 KB test
// files use at most 17% of the nesting and 35% of the renaming budget.
const (
	// maxDepthWork bounds the sum over tokens of their nesting: the printer
	// indents each line by its depth, and several passes walk the enclosing
	// levels per token.
	maxDepthWork = 4 << 20
	// maxSpeculationWork bounds TypeScript backtracking: at a '<' or '?'
	// esbuild may parse ahead speculatively (type arguments, an arrow
	// function in a conditional) to the end of the statement.
	maxSpeculationWork = 500 << 20
	// maxRenameWork bounds esbuild's renamer, which gives shadowing names a
	// numeric suffix by probing each candidate through the enclosing scopes
	// (about 35 ns a unit at worst).
	maxRenameWork = 12 << 20
	// maxFoldWork bounds constant folding of string concatenation, which
	// copies the growing string at each '+' (two bytes per unit).
	maxFoldWork = 16 << 20
)

// ErrLimit is matched (errors.Is) by every *LimitError.
var ErrLimit = errors.New("transpile: the program is over a limit")

// LimitError is a program refused before esbuild reads it, because it is
// over a size or work bound. It is the caller's input that is wrong: an
// executor reports it as invalid arguments.
type LimitError struct {
	// Limit names the bound: "source size", or the work it would cost.
	Limit string
	// Max is the bound and Got what the program needs, in Unit.
	Max, Got int64
	Unit     string
	// Hint says what to change.
	Hint string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("transpile: the program's %s is %d %s, over the limit of %d; %s", e.Limit, e.Got, e.Unit, e.Max, e.Hint)
}

// Is makes every LimitError match ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

func sizeError(n int) *LimitError {
	return &LimitError{Limit: "source size", Max: MaxSourceBytes, Got: int64(n), Unit: "bytes",
		Hint: "send a smaller program (move data into files or tool calls)"}
}
