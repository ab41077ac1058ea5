// Package wasmtime is the wasmtime engine (Cranelift, through cgo): linked,
// it registers itself with package engine (engine.Register), and wasmhost's
// Config.WithEngine can name it. It is a module of its own, the only one
// that requires wasmtime-go, and no file of the root module imports it, so
// neither a plain build nor `go mod tidy` in a module that embeds ptcx sees
// wasmtime-go (207 MB). scripts/wasmtime.sh links it into a build of the
// root module's packages: in workspace mode (go.work here), with an overlay
// that adds a blank import of this package to package wasmhost.
package wasmtime
