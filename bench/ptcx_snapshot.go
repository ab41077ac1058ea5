package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/wasmhost"
)

// ptcx's suspend and resume are measured as wasmhost's
// BenchmarkSnapshot_2MiB measures them, through wasmhost's API, on a
// Runtime of the same engine and limits as the executor's but without a
// warm pool, so that every resumption restores its own instance:
//
//   - suspend is from the quiescent point (Program.Suspend answering yes,
//     the program waiting on its one held call) to Run returning the
//     snapshot: capturing the memory and globals into bytes, and the
//     instance given up;
//   - resume is from Runtime.Resume being handed the bytes to the resumed
//     run dispatching the call it waits on: the snapshot checked and
//     decoded, an instance restored from the image and the snapshot's
//     blocks written over it, ready to take the call's result. The call is
//     then answered and the run's answer checked, untimed.
//
// Both in steady state, as a host that parks and resumes executions one
// after another sees them (the warm-up takes the cold ones): each
// suspension writes into the buffer of the snapshot resumed before it,
// given back with Resumption.Recycle (wasmhost's free list of snapshot
// buffers), and each resume is restored into the memory of the resume
// before it, kept backed (a resume spare).

// snapshots measures a Suspend or Resume job.
func (b *PTCX) snapshots(ctx context.Context, j Job) (Raw, error) {
	rt, err := wasmhost.New(ctx, b.cfg.WithPool(0))
	if err != nil {
		return Raw{}, fmt.Errorf("bench: a Runtime to suspend runs on: %w", err)
	}
	defer func() { _ = rt.Close(context.WithoutCancel(ctx)) }()
	p := j.Warmup()
	first, _, err := suspendHeld(ctx, rt, j, p)
	if err != nil {
		return Raw{}, err
	}
	if _, err := resumeHeld(ctx, rt, p, first, false); err != nil {
		return Raw{}, err
	}
	if j.Kind == Suspend {
		// A buffer in the free list for the first sample's suspension.
		warm, _, err := suspendHeld(ctx, rt, j, p)
		if err != nil {
			return Raw{}, err
		}
		if _, err := resumeHeld(ctx, rt, p, warm, true); err != nil {
			return Raw{}, err
		}
	}
	compressed, err := wasmhost.CompressSnapshot(first.Snapshot)
	if err != nil {
		return Raw{}, fmt.Errorf("bench: compressing the snapshot: %w", err)
	}
	raw := Raw{Samples: make([]float64, j.Samples),
		Note: fmt.Sprintf("snapshot of %s as suspended (a body of %s), %s compressed (wasmhost.CompressSnapshot); "+
			"on a Runtime without a warm pool, as wasmhost's BenchmarkSnapshot_2MiB; in steady state: each suspension into the buffer "+
			"of the snapshot resumed before it (Resumption.Recycle), each resume into the memory of the one before (a resume spare)",
			kib(len(first.Snapshot)), kib(first.RawBytes), kib(len(compressed)))}
	for i := range j.Samples {
		var took time.Duration
		if j.Kind == Suspend {
			s, t, err := suspendHeld(ctx, rt, j, p)
			if err != nil {
				return Raw{}, err
			}
			if _, err := resumeHeld(ctx, rt, p, s, true); err != nil {
				return Raw{}, err
			}
			took = t
		} else if took, err = resumeHeld(ctx, rt, p, first, false); err != nil {
			return Raw{}, err
		}
		raw.Samples[i] = float64(took.Nanoseconds())
	}
	return raw, nil
}

// suspendHeld runs p until it waits on its one nested call and suspends it
// there, returning the snapshot and the time from the quiescent point to
// Run's return.
func suspendHeld(ctx context.Context, rt *wasmhost.Runtime, j Job, p Program) (*wasmhost.Suspended, time.Duration, error) {
	var at time.Time
	var asked []wasmhost.PendingCall
	out, err := rt.Run(ctx, wasmhost.Program{JS: p.JS, Tools: j.Tools, Suspend: func(q wasmhost.Quiescence) bool {
		asked = q.Calls
		at = time.Now()
		return true
	}}, echoDispatcher(nil))
	took := time.Since(at)
	if err != nil {
		return nil, 0, fmt.Errorf("bench: the run to suspend failed: %w", err)
	}
	if out.Suspended == nil {
		return nil, 0, fmt.Errorf("bench: the run to suspend returned %s without waiting on a call (program %q)", out.Result, p.TS)
	}
	if len(asked) != 1 || asked[0].Name != "echo" || len(out.Suspended.Calls) != 1 {
		return nil, 0, fmt.Errorf("bench: the run was suspended waiting on %d calls (%+v), want its one echo call", len(asked), asked)
	}
	return out.Suspended, took, nil
}

// resumeHeld resumes s, answers the call it waits on and checks p's
// answer, returning the time from Resume's call to that call's dispatch.
// With recycle, s's bytes are given to the Runtime (Resumption.Recycle).
func resumeHeld(ctx context.Context, rt *wasmhost.Runtime, p Program, s *wasmhost.Suspended, recycle bool) (time.Duration, error) {
	var ready atomic.Int64
	rs := wasmhost.Resumption{}
	if recycle {
		rs.Recycle = s
	}
	start := time.Now()
	out, err := rt.Resume(ctx, s.Snapshot, echoDispatcher(func() { ready.CompareAndSwap(0, int64(time.Since(start))) }), rs)
	if err != nil {
		return 0, fmt.Errorf("bench: the resumed run failed: %w", err)
	}
	if out.Suspended != nil {
		return 0, fmt.Errorf("bench: the resumed run was suspended again")
	}
	if err := CheckAnswer(p, out.Result); err != nil {
		return 0, fmt.Errorf("bench: the resumed run: %w", err)
	}
	took := time.Duration(ready.Load())
	if took == 0 {
		return 0, fmt.Errorf("bench: the resumed run answered %s without dispatching the call it waited on", out.Result)
	}
	return took, nil
}

// echoDispatcher answers echo with its arguments (any other tool is
// refused), calling dispatched, when not nil, as each call arrives.
func echoDispatcher(dispatched func()) wasmhost.Dispatcher {
	return wasmhost.DispatcherFunc(func(name string, args json.RawMessage, done func(wasmhost.CallResult)) {
		if dispatched != nil {
			dispatched()
		}
		if name != "echo" {
			done(wasmhost.CallResult{Message: fmt.Sprintf("bench: no tool %q here: want echo", name)})
			return
		}
		done(wasmhost.CallResult{OK: true, Value: args})
	})
}

// kib formats n bytes in KiB.
func kib(n int) string { return fmt.Sprintf("%.0f KiB", float64(n)/1024) }
