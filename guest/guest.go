package guest

import _ "embed"

// wasm is the guest module built by build.sh.
//
//go:embed guest.wasm
var wasm []byte

// Wasm returns the guest module's bytes. The slice is shared: do not modify it.
func Wasm() []byte { return wasm }
