//go:build !wasmtime

package wasmhost

import (
	"context"
)

// wasmtimeBuilt says whether this build has the wasmtime engine.
const wasmtimeBuilt = false

func newWasmtimeEngine(context.Context, int64, string) (engine, error) {
	return nil, ErrNoWasmtime
}
