// Package wasmtime is the wasmtime engine (Cranelift, through cgo), in
// builds with the wasmtime tag only: linked, it registers itself with
// package engine (engine.Register), and wasmhost's Config.WithEngine can
// name it. Without the tag the package is empty, and a plain build needs
// neither cgo nor wasmtime-go.
package wasmtime
