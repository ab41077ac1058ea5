package wasmhost

import (
	"encoding/json"

	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// SnapshotCalls reads what a snapshot says its run was bound to and waits
// on, without resuming it and without a Runtime: the tools (Program.Tools)
// and the calls it does not answer, in the order of their ids, held or
// dispatched, as Suspended.Calls listed them. It is for a host that keeps
// a description of a suspended run beside its snapshot, to check the one
// against the other: Resume dispatches the calls the snapshot holds,
// whatever the description says. Only the header and the run's table are
// read (a compressed body is inflated up to the table's end, at most
// MaxSnapshotMetaBytes); what Resume checks beyond them (the guest, the
// image, the memory) is left to it. The table's check is compared for a
// stored snapshot (and for a compressed one of formats 2 and 3, whose
// check is of the frame); a compressed one of format 4 has its check of
// the body inflated, which is not read past the table here: Resume
// compares it. Bytes that are not a snapshot are refused with
// ErrSnapshot, saying why.
func SnapshotCalls(b []byte) (tools []string, calls []PendingCall, err error) {
	tools, pending, err := snapshot.Calls(b)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range pending {
		state := CallHeld
		if c.Dispatched {
			state = CallDispatched
		}
		calls = append(calls, PendingCall{ID: c.ID, Name: c.Name, Args: json.RawMessage(c.Args), State: state})
	}
	sortCalls(calls)
	return tools, calls, nil
}
