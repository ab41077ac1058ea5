package executor

import "github.com/ptcx/ptcx/api"

// busy is run_code's error when the runtime refused the run for want of
// room (wasmhost.ErrBusy, admission control): nothing ran, and the same
// call may succeed later.
func busy(err error) *api.Error {
	return &api.Error{Code: api.CodeBusy,
		Message: "run_code could not start: the executor is at capacity (as many programs are running as it allows); nothing ran, retry later",
		Cause:   err}
}
