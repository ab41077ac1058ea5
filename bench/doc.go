// Package bench measures ptcx beside the systems a user would pick instead,
// in one run: the workloads and their targets are declared once, as data
// (Workloads), and every implementation — ptcx itself (PTCX), goja in-process
// (package bench/gojapeer), a fresh Node worker_threads Worker per run and
// quickjs-wasi on Node (Node) — runs the same programs, each answer checked.
// The results are JSON lines of one shape for every implementation (Result),
// a markdown table whose headline figures are ratios ptcx ÷ peer from the
// same run, with every target's verdict (Markdown, Verdicts), and an SVG bar
// chart per metric (SVG). A latency or per-call workload is measured in
// rounds (Params.Rounds), every implementation taking its share of the
// samples in each, in an order rotated every round, so that the ratios
// compare figures taken in the same stretches of the run.
//
// The workloads: trivial_e2e and trivial_e2e_new (a run_code call end to
// end, of a program seen before and of a new one), per_call_await,
// fanout100x20ms_e2e, rss_per_live_instance (runs parked on a call),
// rss_per_pooled_instance (idle instances of a warm pool), runs_per_second,
// compute_loop, and suspend and resume (a run holding 2 MiB of heap, waiting
// on a call, captured to bytes and brought back in a fresh instance, as
// wasmhost's BenchmarkSnapshot_2MiB measures them); and issue #36's:
// session_feeds (pydantic/monty's ten REPL feeds in one live session, goja
// keeping its state in one runtime beside it: session.go), after_session,
// serve_e2e, serve_rps, serve_client_tool (an in-process ptcx serve driven
// over loopback HTTP: serve.go and a file per workload), parked_10k and
// parked_10k_dir (parked.go), and compute_loop beside QuickJS-NG built
// natively, switch dispatch and computed goto (QJSNative, make bench only);
// and issue #38's Python workloads (Workload.Language, python.go):
// python_1plus1, python_session_feeds (Monty's workload in its original
// Python) and python_per_call_await, ptcx with Python enabled beside the
// same python.wasm started fresh without an image for every run
// (PythonFresh) and native CPython in a process per run (CPythonNative),
// which re-run the feeds so far for each feed, having no sessions. An
// implementation runs TypeScript only unless it is a LanguageRunner; it is
// missing, unsupported, from the other language's workloads.
// Their targets come from issues #12, #13, #36 and #38; a target is on ptcx's
// median, or on the ratio to a peer, from above or (Target.Floor, and for
// rates) from below; or on ptcx's median against its own on another
// workload (Target.Of, a ratio or with Plus a difference), on a figure
// beside the samples (Target.Field, Result.Extra), or on a peer's median
// (Target.Subject). Two of ptcx's workloads that a target compares are
// measured in the same rounds where it matters (Workload.Twin: the peer
// ptcx-twin measures the twin, as a ratio or, with Plus, a difference). A
// workload's Anchors are published figures its median is shown beside as
// ratios, with no verdict, and its Ceiling the bound that peers measuring
// its shares alone put on a rate (serve_rps: the runs in-process and HTTP
// with nothing behind it, http-floor). An
// implementation that cannot measure a kind of workload (goja and
// node-worker neither snapshot nor pool) is missing from it with the reason
// (ErrUnsupported), never dropped.
//
// `go test -bench ./bench/...`, `ptcx bench` and `make bench` drive it. It
// imports the library (api, executor, registry, serve, transpile, wasmhost);
// the library never imports it, and only bench/gojapeer links goja.
//
// BenchmarkPerCallAwait_layers (go test only) splits per_call_await into
// the layers of a nested call, beside goja in the same rounds: ptcx end to
// end, and the sandbox alone with a dispatcher that answers at once or
// from Idle.
package bench
