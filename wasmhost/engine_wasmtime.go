//go:build wasmtime

package wasmhost

// The wasmtime engine, in builds with the wasmtime tag: its adapter
// registers itself (engine.Register) when it is linked.
import _ "github.com/ptcx/ptcx/wasmhost/internal/engine/wasmtime"
