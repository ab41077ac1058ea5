package executor

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/ptcx/ptcx/wasmhost"
)

// Live waits. Parking (park.go) costs a suspension and a resume, a
// millisecond or two, which a client that answers in a few milliseconds
// should not pay. A host that gives ExecuteParkable (or Resume) a context
// made by WithLiveWait is asked, at the point where the program would
// park, to wait for the answers itself while the instance stays live: the
// program waits on no call in flight then, only on held calls of tools that
// answer later, so nothing runs meanwhile. Given every answer, the program
// continues live: the held calls are dispatched as nested calls with
// their answers standing for their bodies, exactly as a resume dispatches
// a parked program's (every phase, the ledger, the notifications). Given
// none (the host stopped waiting), it parks there as it would have.

// WaitingCall is a call a program would park on, shown to a LiveWait.
type WaitingCall struct {
	ID     int32  // the key of the answers LiveWait returns (ParkedCall.ID if it parks)
	CallID string // its nested call's ID (Request.ID), the same as Parked.CallID would give
	Tool   string
	Args   json.RawMessage // as the tool gets them: handles' values in place of their markers
}

// LiveWait waits for the answers of calls, the program's instance kept
// live (and its guest slot given to other guests), for as long as the host
// chooses. It returns the answers by WaitingCall.ID and true to continue
// live (a call it gives no answer for is dispatched to its tool), or false
// to park the program (Parked's calls are then these calls, with the same
// call IDs). It runs on the run's goroutine; ctx is the run's.
type LiveWait func(ctx context.Context, calls []WaitingCall) (map[int32]Answer, bool)

type liveWaitKey struct{}

// WithLiveWait returns ctx carrying w, for ExecuteParkable and
// Parked.Resume: their program asks w before it parks.
func WithLiveWait(ctx context.Context, w LiveWait) context.Context {
	return context.WithValue(ctx, liveWaitKey{}, w)
}

func liveWaitOf(ctx context.Context) LiveWait {
	w, _ := ctx.Value(liveWaitKey{}).(LiveWait)
	return w
}

// waitLive asks pk's LiveWait at a quiescent point where the program would
// park on its held calls, and reports true when it continues live: the
// answers given are then its calls' bodies' (takeParkedAnswer), dropped
// from the table as the run ends (pk.registered).
func (c *codeRun) waitLive(pk *parking, q wasmhost.Quiescence) bool {
	next := c.tok.seq.Load() // held calls are dispatched in the order of their ids, numbered on from here
	calls := make([]WaitingCall, 0, len(q.Calls))
	for _, pc := range q.Calls {
		if pc.State == wasmhost.CallAnswered {
			continue
		}
		next++
		calls = append(calls, WaitingCall{ID: pc.ID, CallID: c.tok.callID + ":ptc:" + strconv.FormatInt(next, 10), Tool: pc.Name, Args: c.tok.callerArgs(pc.Args)})
	}
	if q.Yield != nil {
		q.Yield()
	}
	answers, live := pk.wait(pk.ctx, calls)
	if !live {
		return false
	}
	for _, wc := range calls {
		if a, ok := answers[wc.ID]; ok {
			parkedAnswers.put(wc.CallID, c.tok, a)
			pk.registered = append(pk.registered, wc.CallID)
		}
	}
	return true
}
