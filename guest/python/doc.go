// Package python is the Python guest's build output and its checks: CPython
// 3.13 compiled for wasm32-wasi as a reactor module with our glue (glue/:
// C, and the runtime in Python), speaking the guest ABI version 3
// (docs/abi.md, "Python guest"), and its standard library as a stored zip
// of .pyc files (mkzip.py), both built by build.sh (`make guest-python`)
// into wasm/, which is git-ignored. README.md says what is built, from
// what, and what it measures.
//
// It embeds its build when there is one (python.go: Wasm, Lib), which
// wasmhost runs for programs whose language is Python. Its tests run
// programs through the ABI's exports under wazero, with a fake host module
// ptcx (fakehost_test.go) and the zip mounted read-only.
package python
