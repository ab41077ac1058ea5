// Package abi states the guest ABI the host speaks (docs/abi.md): the
// guest's exports and the host's import module, the statuses and refusals
// they return, the bounds on what the guest may pass, and the JSON that
// starts a program.
package abi

import (
	"errors"
	"fmt"
)

// ABIVersion is the guest ABI this host speaks: PTCX_ABI_VERSION in
// guest/glue/ptcx.h. docs/abi.md documents it; New refuses a guest that
// reports another version.
const ABIVersion = 3

// HandleCall is the reserved name of the guest's internal nested call that
// reads a handle's value (Handle.text(), Handle.json(): docs/abi.md,
// "Handles"). Every run accepts it, whatever its tools: no tool can have
// it (a tool's name starts with a letter or an underscore), and no
// program can make it (the prelude keeps its function to itself).
const HandleCall = "$handle"

// ResumeHandle is ptcx_resume's ok for a call answered with a handle: the
// payload is the handle's envelope (JSON), from which the prelude makes
// the Handle object the program sees.
const ResumeHandle = 2

// Names of the guest's exports.
const (
	ExportABIVersion = "ptcx_abi_version"
	ExportBuffer     = "ptcx_buffer"
	ExportInit       = "ptcx_init"
	ExportBytecode   = "ptcx_prelude_bytecode"
	ExportStart      = "ptcx_start"
	ExportResume     = "ptcx_resume"
	ExportTimer      = "ptcx_timer"
	ExportInitialize = "_initialize" // the WASI reactor's constructor
	ExportRestored   = "ptcx_restored"
	ExportCompile    = "ptcx_compile"
	ExportLoad       = "ptcx_load"
	ExportStalled    = "ptcx_stalled"
)

// HostModule is the import module of the host functions (hostfuncs.go).
const HostModule = "ptcx"

// Statuses returned by ptcx_init, ptcx_start, ptcx_resume and ptcx_timer.
const (
	StatusDone    = 0
	StatusPending = 1
	StatusError   = 2
)

// Refusals returned by the call and timer_set imports instead of an id.
const (
	RefusedPending = -1 // MaxPendingCalls calls are already pending
	RefusedTotal   = -2 // MaxCalls calls were already made
	RefusedTimers  = -3 // MaxTimers timers are already pending
)

// MaxTimers caps the timers a program may have pending at once.
const MaxTimers = 10_000

// Upper bounds on what the guest may pass to one import. They are far above
// what the prelude sends; a larger length is a broken guest.
const (
	MaxNameBytes  = 64 << 10
	MaxErrorBytes = 1 << 20
)

// GuestRange checks that [ptr, ptr+length) lies inside a memory of size
// bytes and that length is at most limit. ptr and length are the raw i32
// stack values the guest passed (upper bits ignored, as wasm does).
func GuestRange(size uint32, ptr, length uint64, limit uint32) (uint32, uint32, error) {
	p, n := uint32(ptr), uint32(length)
	switch {
	case n > limit:
		return 0, 0, fmt.Errorf("length %d is over the limit of %d bytes", n, limit)
	case uint64(p)+uint64(n) > uint64(size):
		return 0, 0, fmt.Errorf("range [%d, %d) is outside the guest's %d bytes of memory", p, uint64(p)+uint64(n), size)
	}
	return p, n, nil
}

// GuestConfig is the JSON passed to ptcx_start.
type GuestConfig struct {
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

// EngineMemoryLimit is the QuickJS memory limit for a linear memory capped
// at memoryBytes: below the cap by the stack, static data and allocator
// overhead, so running out is usually a catchable JavaScript error rather
// than a failed memory.grow.
func EngineMemoryLimit(memoryBytes int64) int64 {
	return memoryBytes - (1<<20 + memoryBytes/16)
}

// PageSize is the size of a wasm page.
const PageSize = 65536

// MemoryPages converts a memory limit to whole wasm pages (rounding down).
func MemoryPages(bytes int64) uint32 {
	return uint32(bytes / PageSize)
}

// ErrStaleGuest means the guest lacks an export this host needs.
var ErrStaleGuest = errors.New("wasmhost: the guest lacks a ptcx export (is guest.wasm stale? run make guest)")
