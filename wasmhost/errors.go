package wasmhost

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/sys"

	"github.com/ptcx/ptcx/api"
)

// ErrAbandoned is in the Cause of a RunError (errors.Is) when Run returned
// without its guest: the guest did not stop within 250 ms of its deadline
// or its cancellation (a single long operation that cannot be interrupted,
// or a dispatcher that held the run's goroutine). The guest's goroutine
// discards the instance when it comes back. With the metered guest this
// should not happen; a host may count it.
var ErrAbandoned = errors.New("wasmhost: the guest did not stop in time and was left behind")

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
