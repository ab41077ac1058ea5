package api

// Ledger is what one run_code run did: the nested calls it made, in the
// order they finished, and its measurements. It is bounded: past
// MaxLedgerCalls calls, the rest are only counted (Omitted).
type Ledger struct {
	Calls []LedgerCall `json:"calls"`
	// Omitted counts the calls made past MaxLedgerCalls.
	Omitted int      `json:"omitted,omitempty"`
	Stats   RunStats `json:"stats"`
}

// MaxLedgerCalls is the most nested calls a Ledger lists;
// MaxLedgerArgsBytes the most bytes of one call's argument summary.
const (
	MaxLedgerCalls     = 200
	MaxLedgerArgsBytes = 80
)

// LedgerCall is one nested call of a run.
type LedgerCall struct {
	Tool string `json:"tool"`
	// Code is the call's error code; empty when it succeeded.
	Code Code `json:"code,omitempty"`
	// DurationMS is the time the call's body ran, from its start to the
	// call's settlement, in milliseconds (0 when it never started).
	DurationMS float64 `json:"duration_ms"`
	// Args is a short summary of the arguments (their first string value,
	// preferring a path, name or query), at most MaxLedgerArgsBytes.
	Args string `json:"args"`
	// Labels is the label of the call's result, when it is not the lowest
	// ({trusted, public}).
	Labels *Label `json:"labels,omitempty"`
	// Cost is what the call cost, as its tool declared (cost), when it
	// declared one and the call was allowed.
	Cost int64 `json:"cost,omitempty"`
}

// RunStats are the measurements of one run. A failed run's are what it
// used up to its failure (compute and memory are 0 only for a run that
// failed before its program ran: refused, or not admitted).
type RunStats struct {
	ComputeMS float64 `json:"compute_ms"`
	WallMS    float64 `json:"wall_ms"`
	Calls     int     `json:"calls"`
	// MemoryBytes is the guest's peak linear memory (it never shrinks).
	MemoryBytes int64 `json:"memory_bytes"`
	// Cost is the sum of the calls' costs (LedgerCall.Cost).
	Cost int64 `json:"cost,omitempty"`
}
