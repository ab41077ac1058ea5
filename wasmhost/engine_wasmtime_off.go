//go:build !wasmtime

package wasmhost

import (
	"context"
	"errors"
)

// wasmtimeBuilt says whether this build has the wasmtime engine.
const wasmtimeBuilt = false

// ErrNoWasmtime is returned by New for EngineWasmtime in a build without it.
var ErrNoWasmtime = errors.New("wasmhost: this ptcx was built without the wasmtime engine: build with -tags wasmtime (cgo and a C compiler are needed)")

func newWasmtimeEngine(context.Context, int64, string) (engine, error) {
	return nil, ErrNoWasmtime
}
