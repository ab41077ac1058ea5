// Package python is the Python guest's build output and its checks: CPython
// 3.13 compiled for wasm32-wasi as a reactor module with our C glue
// (glue/glue.c), and its standard library as a stored zip of .pyc files
// (mkzip.py), both built by build.sh (`make guest-python`) into wasm/,
// which is git-ignored. README.md says what is built, from what, and what it
// measures.
//
// It embeds its build when there is one (python.go: Wasm, Lib), which
// wasmhost runs for programs whose language is Python.
//
// Its tests (pyguest_test.go) load wasm/python.wasm under wazero with the
// zip mounted read-only and run code through the glue's exports.
package python
