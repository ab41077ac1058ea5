//go:build !unix

package serve_test

import (
	"errors"
	"os"
)

func pause(*os.Process) error   { return errors.ErrUnsupported }
func unpause(*os.Process) error { return errors.ErrUnsupported }
