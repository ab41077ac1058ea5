package executor

import (
	"fmt"
	"runtime/debug"
)

// PanicError is the cause of an INTERNAL error made from a panic in host code
// (a tool body, a listener, a guard, a finalizer). Stack is kept for the
// host's logs; it never reaches a program or a model.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// safely runs f, turning a panic into a *PanicError.
func safely(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return f()
}
