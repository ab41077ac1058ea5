package executor

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
	"github.com/ptcx/ptcx/plan"
	"github.com/ptcx/ptcx/wasmhost"
)

// Parked executions as bytes. Marshal writes everything a parked run_code
// execution is (the call, its limits and world, the tools it was bound to
// and which of them answer later, the calls it waits on, its nested-call
// counter and ledger so far, and the sandbox's snapshot); RestoreParked
// rebuilds it in another executor, in this process or another, with a
// fresh parent token for the same execution id. The format:
//
//	"PTCXPARK" | version u32 | header length u32 | header (JSON)
//	| snapshot length u64 | snapshot (wasmhost) | CRC-32C u32 of all before it
//
// All integers are big-endian. Nothing in it is trusted: every length is
// checked against what is left of the input before anything is allocated.
//
// Version 2 is version 1 whose waiting calls may be held for an approval
// (a call's "approval" member: park_approval.go). Marshal writes version
// 1 when no call is, so that an executor that reads only version 1 still
// reads those bytes; it refuses version 2 bytes clearly, by their
// version, rather than continuing a program whose approvals it would
// dispatch unasked.

// ParkedVersion is the newest version of the parked-execution format:
// what Marshal writes for a program parked on an approval. RestoreParked
// reads it and every version before it.
const ParkedVersion = 2

// parkedVersionTools is the version Marshal writes when no waiting call
// is held for an approval.
const parkedVersionTools = 1

// parkedMagic opens every parked execution's bytes.
const parkedMagic = "PTCXPARK"

// MaxParkedHeaderBytes bounds the part of a parked execution that is not
// the sandbox's snapshot: the call's arguments (the program, within
// DefaultMaxCodeBytes), the waiting calls' arguments (within the run's
// in-flight bound, api.Limits.MaxInFlightArgBytes), the ledger and the
// handles it holds with their values (handles.go: an execution whose
// handles do not fit is not parked to bytes; Marshal says why).
const MaxParkedHeaderBytes = 64 << 20

// parkedFixed is the size of the format's fixed fields.
const parkedFixed = len(parkedMagic) + 4 + 4 + 8 + 4

// The errors of RestoreParked, matched with errors.Is.
var (
	// ErrParkedFormat: the bytes are not a parked execution this version
	// reads (truncated, corrupt, another version, oversized).
	ErrParkedFormat = errors.New("executor: not a readable parked execution")
	// ErrParkedIncompatible: the bytes are a parked execution, but this
	// executor cannot continue it as it was (its scope, its mode or a
	// tool it was bound to changed or is gone, or its runtime cannot
	// resume runs).
	ErrParkedIncompatible = errors.New("executor: the parked execution cannot continue in this executor")
	// ErrParkedTaken: these bytes were restored already in this process,
	// or are those of an execution parked here and not yet resumed: one
	// parked state completes once.
	ErrParkedTaken = errors.New("executor: this parked execution was restored already in this process")
)

// parkedHeader is the JSON part of a parked execution.
type parkedHeader struct {
	ID     string          `json:"id"`
	Scope  string          `json:"scope"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	World  *parkedWorld    `json:"world,omitempty"`
	Mode   api.Mode        `json:"mode"`
	Tools  []string        `json:"tools"`           // bound, in order
	Later  []string        `json:"later,omitempty"` // those that answer later
	Limits parkedLimits    `json:"limits"`
	// Nonce tells one parked state of the execution from another: each
	// park mints one.
	Nonce    string       `json:"nonce"`
	Seq      int64        `json:"seq"`
	ElapsedN int64        `json:"elapsed_ns"`
	RawBytes int          `json:"raw_bytes"`
	Calls    []parkedCall `json:"calls"`
	Ledger   parkedLedger `json:"ledger"`
	// Plan is the state of the approved plan the run is bound to
	// (plan.Bound, with the calls it admitted), or absent.
	Plan json.RawMessage `json:"plan,omitempty"`
	// Flow is the execution's data-flow state (flow.go): absent when its
	// label is the lowest and nothing was counted.
	Flow *parkedFlow `json:"flow,omitempty"`
	// Handles are the handles the execution holds, with their values
	// (handles.go): absent when it holds none.
	Handles []parkedHandle `json:"handles,omitempty"`
}

// parkedFlow is a parked execution's context label, its sources, its
// calls per tool and its cost.
type parkedFlow struct {
	Label   api.Label      `json:"label"`
	Sources []parkedSource `json:"sources,omitempty"`
	Counts  map[string]int `json:"counts,omitempty"`
	Cost    int64          `json:"cost,omitempty"`
}

type parkedSource struct {
	Tool  string    `json:"tool"`
	Label api.Label `json:"label"`
}

type parkedWorld struct {
	Seed  uint64 `json:"seed"`
	Start int64  `json:"start_unix_ns"`
}

type parkedLimits struct {
	ComputeNS           int64 `json:"compute_ns"`
	WallNS              int64 `json:"wall_ns"`
	MemoryBytes         int64 `json:"memory_bytes"`
	OutputBytes         int   `json:"output_bytes"`
	ModelBytes          int   `json:"model_bytes"`
	MaxPendingCalls     int   `json:"max_pending_calls"`
	MaxCalls            int   `json:"max_calls"`
	MaxCallArgBytes     int   `json:"max_call_arg_bytes"`
	MaxInFlightArgBytes int   `json:"max_in_flight_arg_bytes"`
}

type parkedCall struct {
	ID         int32           `json:"id"`
	Name       string          `json:"name"`
	Args       json.RawMessage `json:"args,omitempty"`
	Dispatched bool            `json:"dispatched,omitempty"`
	// Approval is set for a call held for an approval (version 2 only).
	Approval *parkedApproval `json:"approval,omitempty"`
}

type parkedLedger struct {
	Calls   []api.LedgerCall `json:"calls"`
	Args    [][]byte         `json:"args"` // per call: the head summarised at report, or null
	Total   int              `json:"total"`
	Omitted int              `json:"omitted"`
	Cost    int64            `json:"cost,omitempty"`
}

func limitsOf(l api.Limits) parkedLimits {
	return parkedLimits{ComputeNS: int64(l.ComputeTime), WallNS: int64(l.WallTime), MemoryBytes: l.MemoryBytes,
		OutputBytes: l.OutputBytes, ModelBytes: l.ModelBytes, MaxPendingCalls: l.MaxPendingCalls, MaxCalls: l.MaxCalls,
		MaxCallArgBytes: l.MaxCallArgBytes, MaxInFlightArgBytes: l.MaxInFlightArgBytes}
}

func (p parkedLimits) api() api.Limits {
	return api.Limits{ComputeTime: time.Duration(p.ComputeNS), WallTime: time.Duration(p.WallNS), MemoryBytes: p.MemoryBytes,
		OutputBytes: p.OutputBytes, ModelBytes: p.ModelBytes, MaxPendingCalls: p.MaxPendingCalls, MaxCalls: p.MaxCalls,
		MaxCallArgBytes: p.MaxCallArgBytes, MaxInFlightArgBytes: p.MaxInFlightArgBytes}
}

// Marshal writes the parked execution as bytes RestoreParked reads, its
// snapshot compressed (wasmhost.CompressSnapshot). The Parked stays usable:
// Marshal does not resume or discard it. It fails on a Parked already
// resumed or discarded (its state moved on).
func (p *Parked) Marshal() ([]byte, error) {
	if p.used.Load() {
		return nil, errors.New("executor: this parked execution was already resumed or discarded: there is nothing left to marshal")
	}
	c := p.run
	x := c.x
	mode, err := x.e.reg.Mode(x.req.Scope)
	if err != nil {
		return nil, fmt.Errorf("executor: marshalling parked execution %s: %w", x.req.ID, err)
	}
	h := parkedHeader{ID: x.req.ID, Scope: x.req.Scope, Tool: x.req.Tool, Args: x.req.Args, Mode: mode,
		Tools: c.names, Limits: limitsOf(c.limits), Nonce: p.nonce, Seq: c.tok.seq.Load(), ElapsedN: int64(c.elapsed),
		RawBytes: p.snap.RawBytes}
	if w := x.req.World; w != nil {
		start := w.Start
		if start.IsZero() {
			start = wasmhost.DefaultEpoch()
		}
		h.World = &parkedWorld{Seed: w.Seed, Start: start.UnixNano()}
	}
	for _, n := range c.names {
		if p.later(n) {
			h.Later = append(h.Later, n)
		}
	}
	version := uint32(parkedVersionTools)
	for _, pc := range p.snap.Calls {
		hc := parkedCall{ID: pc.ID, Name: pc.Name, Args: pc.Args, Dispatched: pc.State == wasmhost.CallDispatched}
		if a, ok := p.approvals[pc.ID]; ok {
			hc.Approval = &a
			version = ParkedVersion
		}
		h.Calls = append(h.Calls, hc)
	}
	if c.tok.plan != nil {
		if h.Plan, err = json.Marshal(c.tok.plan); err != nil {
			return nil, fmt.Errorf("executor: marshalling parked execution %s: its plan: %w", x.req.ID, err)
		}
	}
	l := &c.tok.ledger
	l.mu.Lock()
	h.Ledger = parkedLedger{Calls: slices.Clone(l.calls), Args: slices.Clone(l.args), Total: l.total, Omitted: l.omitted, Cost: l.cost}
	l.mu.Unlock()
	h.Flow = c.tok.flow.parked()
	h.Handles = c.tok.parkedHandles()
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("executor: marshalling parked execution %s: %w", x.req.ID, err)
	}
	if len(hb) > MaxParkedHeaderBytes {
		return nil, fmt.Errorf("executor: parked execution %s: its header is %d bytes, over MaxParkedHeaderBytes (%d)", x.req.ID, len(hb), MaxParkedHeaderBytes)
	}
	// Parked bytes are for keeping elsewhere (a file, a store, another
	// node): the snapshot goes compressed (wasmhost suspends to a stored
	// body, several times larger, for speed in memory).
	snap, err := wasmhost.CompressSnapshot(p.snap.Snapshot)
	if err != nil {
		return nil, fmt.Errorf("executor: parked execution %s: compressing its snapshot: %w", x.req.ID, err)
	}
	return frameParked(version, hb, snap), nil
}

// frameParked is the format, of version, around a header and a snapshot.
func frameParked(version uint32, header, snap []byte) []byte {
	out := make([]byte, 0, parkedFixed+len(header)+len(snap))
	out = append(out, parkedMagic...)
	out = binary.BigEndian.AppendUint32(out, version)
	out = binary.BigEndian.AppendUint32(out, uint32(len(header)))
	out = append(out, header...)
	out = binary.BigEndian.AppendUint64(out, uint64(len(snap)))
	out = append(out, snap...)
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxParkedBytes is the most bytes of a parked execution an executor
// reads: the header's bound and a snapshot of a memory at the executor's
// limit (a snapshot is compressed; incompressible memory is stored
// nearly as it is) with its metadata.
func (e *Executor) maxParkedBytes() int64 {
	return int64(parkedFixed) + MaxParkedHeaderBytes + e.limits.MemoryBytes + int64(wasmhost.MaxSnapshotMetaBytes) + 1<<20
}

// decodeParked reads the format, and the calls the snapshot itself waits
// on (which its header must name exactly). It allocates nothing beyond
// what the input holds: the header is decoded from a slice of it, the
// snapshot is a copy of its part of it, and of the snapshot only its
// table is read (wasmhost.SnapshotCalls).
func decodeParked(data []byte, limit int64) (*parkedHeader, []byte, []wasmhost.PendingCall, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrParkedFormat, fmt.Sprintf(format, args...))
	}
	if int64(len(data)) > limit {
		return nil, nil, nil, bad("it is %d bytes, over this executor's limit of %d bytes", len(data), limit)
	}
	if len(data) < len(parkedMagic) || string(data[:len(parkedMagic)]) != parkedMagic {
		if len(data) < len(parkedMagic) && bytes.HasPrefix([]byte(parkedMagic), data) {
			return nil, nil, nil, bad("it is truncated: %d bytes, less than the format's fixed %d", len(data), parkedFixed)
		}
		return nil, nil, nil, bad("it does not start with %q", parkedMagic)
	}
	if len(data) < parkedFixed {
		return nil, nil, nil, bad("it is truncated: %d bytes, less than the format's fixed %d", len(data), parkedFixed)
	}
	rest := data[len(parkedMagic):]
	version := binary.BigEndian.Uint32(rest)
	if version < 1 || version > ParkedVersion {
		return nil, nil, nil, bad("it is of format version %d; this executor reads versions 1 to %d", version, ParkedVersion)
	}
	hlen := uint64(binary.BigEndian.Uint32(rest[4:]))
	rest = rest[8:]
	if hlen > MaxParkedHeaderBytes {
		return nil, nil, nil, bad("its header claims %d bytes, over MaxParkedHeaderBytes (%d)", hlen, MaxParkedHeaderBytes)
	}
	if hlen+8+4 > uint64(len(rest)) {
		return nil, nil, nil, bad("it is truncated: its header claims %d bytes and %d are left", hlen, len(rest)-12)
	}
	hb := rest[:hlen]
	rest = rest[hlen:]
	slen := binary.BigEndian.Uint64(rest)
	rest = rest[8:]
	if slen+4 != uint64(len(rest)) {
		if slen+4 > uint64(len(rest)) || slen > uint64(len(rest)) {
			return nil, nil, nil, bad("it is truncated: its snapshot claims %d bytes and %d are left", slen, max(len(rest)-4, 0))
		}
		return nil, nil, nil, bad("%d bytes follow its end", uint64(len(rest))-slen-4)
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, nil, nil, bad("it is corrupt: its checksum is %08x, its content's %08x", want, got)
	}
	var h parkedHeader
	d := json.NewDecoder(bytes.NewReader(hb))
	d.DisallowUnknownFields()
	if err := d.Decode(&h); err != nil {
		return nil, nil, nil, bad("its header is not valid: %v", err)
	}
	if d.More() {
		return nil, nil, nil, bad("its header has data after its end")
	}
	if err := h.check(version); err != nil {
		return nil, nil, nil, bad("its header is not valid: %v", err)
	}
	snap := bytes.Clone(rest[:slen])
	tools, calls, err := wasmhost.SnapshotCalls(snap)
	if err != nil {
		return nil, nil, nil, bad("its snapshot: %v", err)
	}
	if err := h.agrees(tools, calls); err != nil {
		return nil, nil, nil, bad("its header and its snapshot disagree: %v", err)
	}
	return &h, snap, calls, nil
}

// check validates what the header says, beyond its JSON shape, for the
// format's version.
func (h *parkedHeader) check(version uint32) error {
	switch {
	case h.ID == "":
		return errors.New("no execution id")
	case h.Scope == "":
		return errors.New("no scope")
	case h.Tool == "":
		return errors.New("no tool")
	case !json.Valid(h.Args):
		return errors.New("the call's arguments are not JSON")
	case h.Nonce == "":
		return errors.New("no nonce")
	case !h.Mode.HasRunCode():
		return fmt.Errorf("its mode %q is not one with run_code (ptc or both): a parked execution is a run_code program's", h.Mode)
	case h.Seq < 0 || h.ElapsedN < 0 || h.RawBytes < 0:
		return errors.New("a negative counter")
	case len(h.Calls) == 0:
		return errors.New("no call is waited on: a parked program always waits on one")
	case len(h.Ledger.Args) != len(h.Ledger.Calls):
		return fmt.Errorf("the ledger has %d calls and %d argument heads", len(h.Ledger.Calls), len(h.Ledger.Args))
	case h.Ledger.Total < len(h.Ledger.Calls) || h.Ledger.Omitted < 0 || len(h.Ledger.Calls) > api.MaxLedgerCalls || h.Ledger.Cost < 0:
		return errors.New("the ledger's counts do not add up")
	}
	if err := h.Flow.check(); err != nil {
		return err
	}
	if err := checkParkedHandles(h.Handles, "execution"); err != nil {
		return err
	}
	if err := h.Limits.api().Validate(); err != nil {
		return fmt.Errorf("its limits: %w", err)
	}
	seen := make(map[int32]bool, len(h.Calls))
	for _, c := range h.Calls {
		if c.ID <= 0 || seen[c.ID] {
			return fmt.Errorf("call id %d is not positive or repeated", c.ID)
		}
		seen[c.ID] = true
		if len(c.Args) > 0 && !json.Valid(c.Args) {
			return fmt.Errorf("call %d's arguments are not JSON", c.ID)
		}
		if a := c.Approval; a != nil {
			switch {
			case version < ParkedVersion:
				return fmt.Errorf("call %d waits for an approval, which format version %d cannot say", c.ID, version)
			case !c.Dispatched:
				return fmt.Errorf("call %d waits for an approval and was not dispatched: a call is held for one only after its policy phases ran", c.ID)
			case !a.Label.Valid():
				return fmt.Errorf("call %d's label is not a known one", c.ID)
			}
		}
	}
	for _, l := range h.Later {
		if !slices.Contains(h.Tools, l) {
			return fmt.Errorf("tool %q answers later but is not bound", l)
		}
	}
	return nil
}

// agrees checks the header against what the snapshot holds: the tools the
// program is bound to, and the calls it waits on (ids, tools, arguments,
// dispatched or held). Resume answers the calls the header names and
// dispatches those the snapshot holds: were they not the same, answers
// would go to calls they were not given for.
func (h *parkedHeader) agrees(tools []string, calls []wasmhost.PendingCall) error {
	if !slices.Equal(h.Tools, tools) {
		return fmt.Errorf("the header binds tools %q, the snapshot %q", h.Tools, tools)
	}
	if len(h.Calls) != len(calls) {
		return fmt.Errorf("the header names %d waiting calls, the snapshot holds %d", len(h.Calls), len(calls))
	}
	for i, c := range calls {
		hc := h.Calls[i]
		switch {
		case hc.ID != c.ID:
			return fmt.Errorf("waiting call %d is call %d in the header and call %d in the snapshot", i+1, hc.ID, c.ID)
		case hc.Name != c.Name:
			return fmt.Errorf("call %d is of tool %q in the header and of %q in the snapshot", c.ID, hc.Name, c.Name)
		case hc.Dispatched != (c.State == wasmhost.CallDispatched):
			return fmt.Errorf("call %d is %s in the snapshot, and the header says otherwise", c.ID, c.State)
		case !sameJSON(hc.Args, c.Args):
			return fmt.Errorf("call %d's arguments differ between the header and the snapshot", c.ID)
		}
	}
	return nil
}

// sameJSON reports whether a and b are the same JSON text but for
// insignificant space (both empty counts as the same).
func sameJSON(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// RestoreParked rebuilds a parked execution from Marshal's bytes, made by
// this executor or another (another process, another node) over a registry
// of the same shape: a fresh parent token for the same execution id, in
// the same scope; then Resume (or Discard) works as it does on the Parked
// ExecuteParkable returned. The call's pre-execute phases (policy,
// approval, guards) are not run again: they ran when it started.
//
// It is refused, before anything runs, with ErrParkedFormat for bytes that
// are not a parked execution of this version (or over this executor's
// size limit, or whose header disagrees with its snapshot about the tools
// the program is bound to or the calls it waits on, or names a mode
// without run_code: the calls answered and dispatched are always the ones
// the snapshot holds), with ErrParkedIncompatible when the execution could not
// continue as it was here (its scope is gone, its tool no longer resolves
// for the caller, the scope's mode changed, or a tool it was bound to is
// no longer bindable), and with ErrParkedTaken when this parked state is
// held by a Parked of this process (parked here, or restored, and neither
// resumed nor discarded yet) or was resumed here already
// (MaxRememberedParked), so that one parked state completes at most once
// per process; across processes it is the caller's store that must see to
// it (serve's revision-checked records).
func (e *Executor) RestoreParked(data []byte) (*Parked, error) {
	h, snap, pending, err := decodeParked(data, e.maxParkedBytes())
	if err != nil {
		return nil, err
	}
	incompatible := func(format string, args ...any) error {
		return fmt.Errorf("%w: execution %s: %s", ErrParkedIncompatible, h.ID, fmt.Sprintf(format, args...))
	}
	if _, ok := e.cfg.runtime.(resumer); !ok {
		return nil, incompatible("this executor's code runtime cannot resume runs (use a *wasmhost.Runtime)")
	}
	mode, err := e.reg.Mode(h.Scope)
	if err != nil {
		return nil, incompatible("its scope %q: %v", h.Scope, err)
	}
	if mode != h.Mode {
		return nil, incompatible("its scope %q is now in mode %q, and it was parked in mode %q: what its program may call would differ", h.Scope, mode, h.Mode)
	}
	res := e.resolve(h.Scope, h.Tool, false)
	if res.Refusal != resolve.Resolved || !res.Definition.Transport() {
		return nil, incompatible("its tool %q no longer resolves to run_code in scope %q", h.Tool, h.Scope)
	}
	bindable, err := e.reg.Bindable(h.Scope)
	if err != nil {
		return nil, incompatible("its scope %q: %v", h.Scope, err)
	}
	for _, n := range h.Tools {
		if !slices.ContainsFunc(bindable, func(s api.Schema) bool { return s.Name == n }) {
			return nil, incompatible("the tool %q it was bound to is no longer bindable in scope %q", n, h.Scope)
		}
	}
	args, perr := resolve.ParseArgs(h.Args)
	if perr != nil {
		return nil, incompatible("its arguments: %s", perr.Message)
	}
	call := Call{ID: h.ID, Scope: h.Scope, Name: h.Tool, Args: h.Args}
	if h.World != nil {
		call.World = &wasmhost.World{Seed: h.World.Seed, Start: time.Unix(0, h.World.Start).UTC()}
	}
	x := e.newExecution(call, nil)
	x.created, x.ran = true, true
	x.res, x.def, x.fin, x.args = res, res.Definition, res.Definition, args
	a := runCodeArgsOf(args)
	if !slices.Contains(e.cfg.Languages(), a.Language) {
		return nil, incompatible("its program is %s, which this executor does not run (it runs %s)",
			a.Language.Title(), api.JoinLanguages(e.cfg.Languages()))
	}
	if sl, ok := e.cfg.runtime.(snapshotLanguager); ok {
		// The record's language is checked above; its snapshot's guest
		// must be that language's, or the bytes would run a guest the
		// record does not name.
		if got := sl.SnapshotLanguage(snap); got != "" && got != a.Language {
			return nil, incompatible("its snapshot was made by the %s guest, and its program is %s", got.Title(), a.Language.Title())
		}
	}
	prog, err := programOf(a) // Python as written, TypeScript stripped
	if err != nil {
		return nil, incompatible("its program no longer transpiles: %v", err)
	}
	var bound *plan.Bound
	if len(h.Plan) > 0 {
		if bound, err = plan.RestoreBound(h.Plan); err != nil {
			return nil, incompatible("its plan: %v", err)
		}
	}
	if !takenParked.hold(h.ID + "\x00" + h.Nonce) {
		return nil, fmt.Errorf("%w: execution %s (parked state %s)", ErrParkedTaken, h.ID, h.Nonce)
	}
	tok := e.mintToken(h.ID, h.Scope)
	tok.seq.Store(h.Seq)
	tok.ledger.calls, tok.ledger.args = h.Ledger.Calls, h.Ledger.Args
	tok.ledger.total, tok.ledger.omitted, tok.ledger.cost = h.Ledger.Total, h.Ledger.Omitted, h.Ledger.Cost
	tok.flow.restore(h.Flow)
	tok.restoreHandles(h.Handles)
	tok.plan = bound
	c := &codeRun{x: x, prog: prog, lang: a.Language, names: h.Tools, limits: h.Limits.api().Within(e.limits), tok: tok,
		start: time.Now(), elapsed: time.Duration(h.ElapsedN)}
	later := make(map[string]bool, len(h.Later))
	for _, n := range h.Later {
		later[n] = true
	}
	// The calls are the snapshot's own (the header's agree with them):
	// those are what the program waits on.
	s := &wasmhost.Suspended{Snapshot: snap, RawBytes: h.RawBytes, Calls: pending}
	p := &Parked{run: c, later: func(tool string) bool { return later[tool] }, snap: s, nonce: h.Nonce}
	for _, hc := range h.Calls {
		if hc.Approval != nil {
			if p.approvals == nil {
				p.approvals = make(map[int32]parkedApproval)
			}
			p.approvals[hc.ID] = *hc.Approval
		}
	}
	return p, nil
}

// snapshotLanguager is a code runtime that tells which guest made a
// snapshot: *wasmhost.Runtime.
type snapshotLanguager interface {
	SnapshotLanguage(b []byte) api.Language
}

// newParkedNonce mints the id of one parked state, held in this process
// by the Parked that carries it.
func newParkedNonce(id string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	n := hex.EncodeToString(b[:])
	takenParked.hold(id + "\x00" + n)
	return n
}

// MaxRememberedParked is how many resumed parked states (the most recent)
// a process remembers: one held by a Parked (parked here, or restored and
// not yet resumed or discarded; never forgotten) or resumed and remembered
// cannot be restored (ErrParkedTaken); a discarded one can, as this process
// gave it up. An older resumed one is forgotten, and the store's revision
// check is what stands between it and a second completion.
const MaxRememberedParked = 1 << 16

// takenParked are the parked states of this process, oldest first.
var takenParked = parkedStates{max: MaxRememberedParked}

// parkedStates remembers parked states by "id\x00nonce": held (true) or
// resumed (false).
type parkedStates struct {
	mu    sync.Mutex
	max   int
	held  map[string]bool
	order []string
}

// hold records key held and reports whether it was neither held nor
// resumed before.
func (t *parkedStates) hold(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held == nil {
		t.held = make(map[string]bool)
	}
	if _, ok := t.held[key]; ok {
		return false
	}
	t.evict()
	t.held[key] = true
	t.order = append(t.order, key)
	return true
}

// resumed marks key resumed: it can never be restored again (while it is
// remembered).
func (t *parkedStates) resumed(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.held[key]; ok {
		t.held[key] = false
	}
}

// evict forgets, oldest first, resumed states (and the keys released
// since) until fewer than max are in order. A state still held is never
// forgotten: its bytes could then be restored a second time while its
// Parked is live; held states are bounded by the Parked values alive.
// Under t.mu.
func (t *parkedStates) evict() {
	if len(t.order) < t.max {
		return
	}
	kept := t.order[:0]
	for i, k := range t.order {
		if len(kept)+len(t.order)-i < t.max {
			kept = append(kept, t.order[i:]...)
			break
		}
		if t.held[k] {
			kept = append(kept, k)
			continue
		}
		delete(t.held, k)
	}
	t.order = kept
}

// release forgets a held key (its Parked was discarded); evict drops its
// place in order later.
func (t *parkedStates) release(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[key] {
		delete(t.held, key)
	}
}

// stateKey is p's key among the parked states.
func (p *Parked) stateKey() string { return p.run.x.req.ID + "\x00" + p.nonce }
