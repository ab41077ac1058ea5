package wasmhost

import (
	"fmt"
	"sync"

	"github.com/ptcx/ptcx/guest"
	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/meter"
)

// pollInterval is how many loop iterations of the guest's compiled code run
// between two calls of the poll import: about 20 to 50 µs of JavaScript.
const pollInterval = 10_000

// bulkBytes is how many bytes of a bulk memory operation (memory.copy,
// memory.fill) count as one loop iteration: a copy of the whole 256 MiB
// memory counts 65,536, so the guest polls before it.
const bulkBytes = 4096

// meterGuest returns the guest with a countdown at every loop header of its
// code that calls the poll import every pollInterval iterations, and a
// charge of its size before every bulk memory operation (package meter).
// Whatever the guest does, then, it comes back to the host within a bounded
// number of steps, where the host can stop it and the Go scheduler and
// garbage collector can preempt its goroutine: the host does not rely on the
// guest's engine to poll. (wazero's own WithCloseOnContextDone does the same
// by calling into Go at every loop iteration, which made JavaScript 3 to 9
// times slower; see RATIONALE.md.)
func meterGuest(bin []byte) ([]byte, error) {
	out, err := meter.Instrument(bin, meter.Options{Module: abi.HostModule, Name: "poll", Interval: pollInterval, BulkBytes: bulkBytes})
	if err != nil {
		return nil, fmt.Errorf("wasmhost: the guest cannot be metered: %w", err)
	}
	return out, nil
}

// embedded is the embedded guest, metered once per process (about 3 ms):
// every Runtime of the default configuration shares it.
var embedded = sync.OnceValues(func() ([]byte, error) { return meterGuest(guest.Wasm()) })
