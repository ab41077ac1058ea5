package wasmhost

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/sys"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// The package's sentinel errors, in one block; check them with errors.Is.
var (
	// ErrAbandoned is in the Cause of a RunError (errors.Is) when Run returned
	// without its guest: the guest did not stop within 250 ms of its deadline
	// or its cancellation (a single long operation that cannot be interrupted,
	// or a dispatcher that held the run's goroutine). The guest's goroutine
	// discards the instance when it comes back. With the metered guest this
	// should not happen; a host may count it.
	ErrAbandoned = errors.New("wasmhost: the guest did not stop in time and was left behind")
	// ErrBusy is returned by Run (errors.Is) when the run was not admitted in
	// time: the Runtime had its maximum of runs, or of committed guest memory,
	// for the whole admission wait. The program did not run; the same call may
	// succeed later. The executor reports it as BUSY, a retryable code.
	ErrBusy = errors.New("wasmhost: the sandbox is busy")
	// ErrClosed is returned by Run on a closed Runtime.
	ErrClosed = errors.New("wasmhost: the Runtime is closed")
	// ErrNoGuest is returned by New when it finds no guest module: the build
	// embeds none (guest/wasm/guest.wasm did not exist when it was compiled, as
	// in a plain clone or a module download), the Config gives none and
	// PTCX_GUEST is not set.
	ErrNoGuest = errors.New("wasmhost: no guest module: this build of ptcx embeds none; " +
		"build it with `make guest` in the ptcx checkout (then rebuild), or give one with " +
		"Config.WithGuest or the " + GuestEnv + " environment variable (the path of a guest.wasm)")
	// ErrNoWasmtime is returned by New for EngineWasmtime in a build without
	// it (Engines lists the engines a build has).
	ErrNoWasmtime = errors.New("wasmhost: this ptcx was built without the wasmtime engine: build with `scripts/wasmtime.sh build` in the ptcx checkout (cgo and a C compiler are needed)")
	// ErrSessionBusy is returned by Session.Suspend, and is the cause of a run's
	// KindAbort failure, when the session is running another program: a session
	// runs one program at a time. The executor queues a session's calls, so
	// that its runs never meet this.
	ErrSessionBusy = errors.New("wasmhost: the session is running another program")
	// ErrSessionBytes means a session's bytes cannot be restored by this
	// Runtime; the message says why.
	ErrSessionBytes = snapshot.ErrSession
	// ErrSessionClosed is the cause of a run's KindAbort failure on a closed
	// Session.
	ErrSessionClosed = errors.New("wasmhost: the session is closed")
	// ErrSnapshot is returned by Runtime.Resume (errors.Is) when a snapshot
	// cannot be resumed by this Runtime: another format, ABI version, guest
	// or image, or corrupt bytes. The message says which.
	ErrSnapshot = snapshot.ErrRefused
)

// trapError describes an export that failed for a reason the host did not
// choose (not a limit, not a cancellation): the guest trapped. memoryFull
// says the run's memory refused to grow before, which makes running out of
// memory the likely cause.
func trapError(err error, memoryFull bool) *RunError {
	var exit *sys.ExitError
	switch {
	case errors.As(err, &exit):
		return &RunError{Kind: api.KindTrap, Message: fmt.Sprintf("the guest exited with code %d", exit.ExitCode()), Cause: err}
	case memoryFull:
		return &RunError{Kind: api.KindMemory, Cause: err,
			Message: "out of memory: the program reached its memory limit and the engine could not recover"}
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg = strings.TrimPrefix(msg, "wasm error: ")
	if strings.Contains(msg, "stack overflow") {
		return &RunError{Kind: api.KindTrap, Cause: err,
			Message: "the guest's call stack overflowed (recursion too deep)"}
	}
	return &RunError{Kind: api.KindTrap, Message: "the guest trapped: " + msg, Cause: err}
}
