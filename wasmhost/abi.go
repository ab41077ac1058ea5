package wasmhost

import (
	"encoding/json"
	"fmt"

	"github.com/ptcx/ptcx/api"
)

// abiVersion is the guest ABI this host speaks: PTCX_ABI_VERSION in
// guest/glue/ptcx.h. docs/abi.md documents it; New refuses a guest that
// reports another version.
const abiVersion = 2

// Names of the guest's exports.
const (
	exportABIVersion = "ptcx_abi_version"
	exportBuffer     = "ptcx_buffer"
	exportInit       = "ptcx_init"
	exportBytecode   = "ptcx_prelude_bytecode"
	exportStart      = "ptcx_start"
	exportResume     = "ptcx_resume"
	exportTimer      = "ptcx_timer"
	exportInitialize = "_initialize" // the WASI reactor's constructor
	exportRestored   = "ptcx_restored"
	exportCompile    = "ptcx_compile"
	exportLoad       = "ptcx_load"
	exportStalled    = "ptcx_stalled"
)

// hostModule is the import module of the host functions (hostfuncs.go).
const hostModule = "ptcx"

// Statuses returned by ptcx_init, ptcx_start, ptcx_resume and ptcx_timer.
const (
	statusDone    = 0
	statusPending = 1
	statusError   = 2
)

// Refusals returned by the call and timer_set imports instead of an id.
const (
	refusedPending = -1 // MaxPendingCalls calls are already pending
	refusedTotal   = -2 // MaxCalls calls were already made
	refusedTimers  = -3 // maxTimers timers are already pending
)

// Levels of the log import, and the prefix each puts before its line.
var logPrefixes = [...]string{
	0: "",         // console.log
	1: "",         // console.info
	2: "",         // console.debug
	3: "[warn] ",  // console.warn
	4: "[error] ", // console.error
}

// maxTimers caps the timers a program may have pending at once.
const maxTimers = 10_000

// Upper bounds on what the guest may pass to one import. They are far above
// what the prelude sends; a larger length is a broken guest.
const (
	maxNameBytes  = 64 << 10
	maxErrorBytes = 1 << 20
)

// guestRange checks that [ptr, ptr+length) lies inside a memory of size
// bytes and that length is at most limit. ptr and length are the raw i32
// stack values the guest passed (upper bits ignored, as wasm does).
func guestRange(size uint32, ptr, length uint64, limit uint32) (uint32, uint32, error) {
	p, n := uint32(ptr), uint32(length)
	switch {
	case n > limit:
		return 0, 0, fmt.Errorf("length %d is over the limit of %d bytes", n, limit)
	case uint64(p)+uint64(n) > uint64(size):
		return 0, 0, fmt.Errorf("range [%d, %d) is outside the guest's %d bytes of memory", p, uint64(p)+uint64(n), size)
	}
	return p, n, nil
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

// guestConfig is the JSON passed to ptcx_start.
type guestConfig struct {
	Code            string   `json:"code"`
	Tools           []string `json:"tools"`
	Catalog         string   `json:"catalog,omitempty"` // Program.Catalog
	MemoryLimit     int64    `json:"memoryLimit"`       // the engine's own limit
	MemoryBytes     int64    `json:"memoryBytes"`       // the limit as the program is told
	MaxPendingCalls int      `json:"maxPendingCalls"`
	MaxCalls        int      `json:"maxCalls"`
	MaxTimers       int      `json:"maxTimers"`
	Session         bool     `json:"session,omitempty"`      // Program.Session: compiled in the session's last scope
	LexicalTools    bool     `json:"lexicalTools,omitempty"` // Program.LexicalTools
}

// engineMemoryLimit is the QuickJS memory limit for a linear memory capped
// at memoryBytes: below the cap by the stack, static data and allocator
// overhead, so running out is usually a catchable JavaScript error rather
// than a failed memory.grow.
func engineMemoryLimit(memoryBytes int64) int64 {
	return memoryBytes - (1<<20 + memoryBytes/16)
}
