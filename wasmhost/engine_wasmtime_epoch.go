//go:build wasmtime

package wasmhost

/*
#include <stdint.h>

typedef struct wasmtime_store wasmtime_store_t;
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_error wasmtime_error_t;

wasmtime_context_t *wasmtime_store_context(wasmtime_store_t *store);
void wasmtime_store_epoch_deadline_callback(wasmtime_store_t *store,
	wasmtime_error_t *(*func)(wasmtime_context_t *context, void *data, uint64_t *epoch_deadline_delta, uint8_t *update_kind),
	void *data, void (*finalizer)(void *));
wasmtime_error_t *wasmtime_error_new(const char *msg);

// ptcxEpoch is the Go side of the callback (engine_wasmtime_epoch_export.go).
extern int ptcxEpoch(uintptr_t state);

// ptcx_epoch_deadline is the store's epoch deadline callback: it runs the
// host's poll and lets the guest go on until the next tick, or traps it
// when the host stopped it (the reason is in the store's data).
static wasmtime_error_t *ptcx_epoch_deadline(wasmtime_context_t *cx, void *data, uint64_t *delta, uint8_t *kind) {
	*delta = 1;
	*kind = 0; // WASMTIME_UPDATE_DEADLINE_CONTINUE
	if (ptcxEpoch((uintptr_t)data) != 0) {
		return wasmtime_error_new("wasmhost: the host stopped the guest at an epoch deadline");
	}
	return NULL;
}

static void ptcx_set_epoch_callback(wasmtime_store_t *store, uintptr_t state) {
	wasmtime_store_epoch_deadline_callback(store, ptcx_epoch_deadline, (void *)state, NULL);
}
*/
import "C"

import (
	"context"
	"runtime/cgo"
	"sync/atomic"
	"time"
	"unsafe"

	wasmtime "github.com/bytecodealliance/wasmtime-go/v39"
)

// On wasmtime the guest is not metered (engine.metered): Cranelift checks
// the engine's epoch at every loop header and function entry, and one
// engine-wide ticker (epochTicker) advances the epoch every epochTick while
// exports run. Every store's deadline is the next tick (set at every
// call into the guest, in ptcx_call), and its deadline callback
// (ptcx_epoch_deadline) runs the host's poll (epochPoll) and extends the
// deadline by one tick: so a guest that computes comes back to the host
// once a tick, wherever it is in its code, as the metered guest does every
// pollInterval loop iterations, and the host stops it there in the same
// way (run.stop, a trap the call raises as the stop's RunError).
//
// The guest's own polls (QuickJS's interrupt handler, every 10,000
// bytecode branches and calls) are unchanged: in JavaScript they come
// first. The epoch is the backstop for code that does not reach them (a
// long native built-in: a sort, a regular expression, a string or array
// operation).

// epochTick is how often the ticker advances the epoch, and so the longest
// a guest runs between two polls outside JavaScript's own. The rules the
// poll applies work at a millisecond (cpuClockAfter, tenantQuantum,
// goQuantum): a shorter tick would poll more often than they need (a tick
// costs the ticker a timer wakeup, and each running store a callback into
// Go, about 1 µs each); a longer one would let a native built-in hold a
// guest slot past its tenant's quantum, or run past its compute deadline
// by more than the meter lets it.
const epochTick = time.Millisecond

// epochLinger is how many ticks the ticker goes on for after the last
// export ended, before it sleeps: exports that follow each other closely
// (a program's nested calls, a few microseconds to milliseconds apart)
// find it ticking, and do not each pay for waking it (a goroutine wake-up
// and a timer reset, which cost an awaited nested call more than its
// export).
const epochLinger = 100

// epochTicker advances the engine's epoch every epochTick while exports
// run, and for epochLinger ticks after, then sleeps until the next export:
// an idle process pays nothing for it. An export pays two atomic adds
// when the ticker is awake.
type epochTicker struct {
	engine  *wasmtime.Engine
	running atomic.Int64 // exports in progress
	asleep  atomic.Bool  // the ticker waits for wake
	wake    chan struct{}
}

// newEpochTicker starts the ticker of engine, asleep.
func newEpochTicker(engine *wasmtime.Engine) *epochTicker {
	t := &epochTicker{engine: engine, wake: make(chan struct{}, 1)}
	t.asleep.Store(true)
	go t.loop()
	return t
}

// enter counts an export that starts, and wakes the ticker when it sleeps.
func (t *epochTicker) enter() {
	t.running.Add(1)
	if t.asleep.Load() && t.asleep.CompareAndSwap(true, false) {
		t.wake <- struct{}{}
	}
}

// leave counts an export that ended.
func (t *epochTicker) leave() { t.running.Add(-1) }

func (t *epochTicker) loop() {
	tick := time.NewTicker(epochTick)
	tick.Stop()
	for range t.wake {
		for {
			tick.Reset(epochTick)
			for idle := 0; idle < epochLinger; {
				<-tick.C
				t.engine.IncrementEpoch()
				if t.running.Load() == 0 {
					idle++
				} else {
					idle = 0
				}
			}
			tick.Stop()
			t.asleep.Store(true)
			// An export that started before asleep was set did not wake
			// the ticker: it goes on for it. (One that starts after sees
			// asleep and wakes it.)
			if t.running.Load() == 0 || !t.asleep.CompareAndSwap(true, false) {
				break
			}
		}
	}
}

// storePtr returns the wasmtime_store_t of store: wasmtime-go keeps it as
// the first field of Store, unexported. It is checked against the store's
// context, which wasmtime-go does export; false when they disagree
// (another wasmtime-go layout than v39's).
func storePtr(store *wasmtime.Store) (*C.wasmtime_store_t, bool) {
	p := *(**C.wasmtime_store_t)(unsafe.Pointer(store))
	if p == nil {
		return nil, false
	}
	ok := unsafe.Pointer(C.wasmtime_store_context(p)) == unsafe.Pointer(store.Context())
	return p, ok
}

// watchEpochs makes st's store call epochPoll at its epoch deadlines. The
// handle it returns names st to the callback; delete it when the store is
// closed.
func watchEpochs(store *wasmtime.Store, st *wasmtimeState) (cgo.Handle, error) {
	p, ok := storePtr(store)
	if !ok {
		return 0, errWasmtimeLayout
	}
	h := cgo.NewHandle(st)
	C.ptcx_set_epoch_callback(p, C.uintptr_t(h))
	store.SetEpochDeadline(1)
	return h, nil
}

// epochPoll is the host's poll at an epoch deadline, for the export in
// progress on st (outside a run, the guest's start-up, it does nothing).
// It is hostPoll but for the count of polls that starts the held calls
// (flushPolls): that count follows the guest's own polls, whose points do
// not depend on time, so the same program holds its calls the same way
// on both engines. It reports whether the host stopped the guest (then
// st.panicked says why).
func epochPoll(st *wasmtimeState) (stopped bool) {
	defer func() {
		if p := recover(); p != nil {
			st.panicked = p
			stopped = true
		}
	}()
	ctx := st.ctx
	if ctx == nil || ctx.Value(runKey{}) == nil {
		return false
	}
	r, t := epochJudge(ctx)
	r.takeTurn(t)
	return false
}

// epochJudge is epochPoll's judgement under run.mu (which a stop's panic
// releases).
func epochJudge(ctx context.Context) (*run, turn) {
	r := enter(ctx)
	defer r.mu.Unlock()
	t := r.polled(r.since())
	if e := r.cancelled(); e != nil {
		r.stop(e)
	}
	return r, t
}
