// Package bench measures ptcx beside the systems a user would pick instead,
// in one run: the workloads and their targets are declared once, as data
// (Workloads), and every implementation — ptcx itself (PTCX), goja in-process
// (package bench/goja), a fresh Node worker_threads Worker per run and
// quickjs-wasi on Node (Node) — runs the same programs, each answer checked.
// The results are JSON lines of one shape for every implementation (Result),
// a markdown table whose headline figures are ratios ptcx ÷ peer from the
// same run (Markdown), and an SVG bar chart per metric (SVG).
//
// `go test -bench ./bench/...`, `ptcx bench` and `make bench` drive it. It
// imports the library (api, executor, registry, transpile, wasmhost); the
// library never imports it, and only bench/goja links goja.
package bench
