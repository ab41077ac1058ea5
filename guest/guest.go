package guest

import "embed"

// files is this package's wasm directory: a README, always, and guest.wasm
// once build.sh has run. Embedding the directory, not the file, lets the
// module build without the guest.
//
//go:embed wasm
var files embed.FS

// wasm is the guest module, or nil when it was not built.
var wasm, _ = files.ReadFile("wasm/guest.wasm")

// Wasm returns the guest module built by build.sh (`make guest`), or nil
// when this build of the package has none: guest/wasm/guest.wasm did not
// exist when it was compiled. The slice is shared: do not modify it.
func Wasm() []byte { return wasm }
