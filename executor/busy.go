package executor

import (
	"errors"

	"github.com/ptcx/ptcx/registry"
)

// errBusy is what the code runtime returns, wrapped or not, when it has no
// room for another run (admission control): run_code then fails with the
// retryable BUSY. It stands for wasmhost.ErrBusy, which it is to become.
var errBusy = errors.New("executor: the code runtime is at capacity")

// busy is run_code's error when the runtime refused the run for want of
// room: nothing ran, and the same call may succeed later.
func busy(err error) *registry.Error {
	return &registry.Error{Code: registry.CodeBusy,
		Message: "run_code could not start: the executor is at capacity (as many programs are running as it allows); nothing ran, retry later",
		Cause:   err}
}
