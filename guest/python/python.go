package python

import (
	"embed"
	"io/fs"
)

// files is this package's wasm directory: a README, always, and
// python.wasm with lib/python313.zip once build.sh has run. Embedding the
// directory, not the files, lets the module build without the guest.
//
//go:embed wasm
var files embed.FS

// wasm is the guest module, or nil when it was not built.
var wasm, _ = files.ReadFile("wasm/python.wasm")

// StdlibMount is where the guest finds its lib directory (the standard
// library's zip): the one directory of its file system.
const StdlibMount = "/usr/local/lib"

// StdlibZip is the standard library's file name inside StdlibMount.
const StdlibZip = "python313.zip"

// Wasm returns the Python guest module built by build.sh (`make
// guest-python`), or nil when this build of the package has none. The
// slice is shared: do not modify it.
func Wasm() []byte { return wasm }

// Lib returns the guest's lib directory (holding StdlibZip), to be mounted
// read-only at StdlibMount as the guest's only file system, or nil when
// this build has no Python guest (Wasm is nil or the zip is missing).
func Lib() fs.FS {
	if wasm == nil {
		return nil
	}
	lib, err := fs.Sub(files, "wasm/lib")
	if err != nil {
		return nil
	}
	if _, err := fs.Stat(lib, StdlibZip); err != nil {
		return nil
	}
	return lib
}
