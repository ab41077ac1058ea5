package bench

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// PythonFresh is ImplPythonWasmFresh: the python.wasm ptcx runs (package
// guest/python, metered as ptcx meters it, its standard library's zip
// mounted read-only as ptcx mounts it), compiled once and instantiated
// fresh for every run, without an image: instantiate, _initialize,
// ptcx_init (CPython and the imports of the guest's runtime), ptcx_start
// with the program, the result read. That is what ptcx's image and warm
// pool save a Python run. It is a wasmhost Runtime with
// Config.WithImage(false), wasmhost's own path for a guest started afresh
// (kept as a baseline), so the ABI is driven by the host ptcx uses, not a
// second one; no executor, no tools. It measures python_1plus1 and
// python_session_feeds (measureAfresh: a session re-runs the feeds so far
// in a fresh instance per feed). Measure is not safe for concurrent use.
type PythonFresh struct {
	rt     *wasmhost.Runtime
	warmed map[string]bool
}

// NewPythonFresh compiles the Python guest (from the compilation cache
// when it is there) on wazero. When this build has no Python guest it
// returns Missing with the reason; Close the peer with the function it
// returns.
func NewPythonFresh(ctx context.Context) (Impl, func()) {
	if err := wasmhost.CheckPython(wasmhost.EngineWazero); err != nil {
		return Missing(ImplPythonWasmFresh, err.Error()), func() {}
	}
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithEngine(wasmhost.EngineWazero).WithImage(false))
	if err == nil {
		err = rt.Prepare(ctx, api.LanguagePython)
		if err != nil {
			_ = rt.Close(ctx)
		}
	}
	if err != nil {
		return Missing(ImplPythonWasmFresh, fmt.Sprintf("starting the Python guest without an image: %v", err)), func() {}
	}
	f := &PythonFresh{rt: rt, warmed: map[string]bool{}}
	return f, func() { _ = rt.Close(context.WithoutCancel(ctx)) }
}

// Name is ImplPythonWasmFresh.
func (f *PythonFresh) Name() string { return ImplPythonWasmFresh }

// RunsLanguage is nil for Python only.
func (f *PythonFresh) RunsLanguage(lang api.Language) error {
	if lang.Canonical() != api.LanguagePython {
		return fmt.Errorf("%s runs Python programs only", ImplPythonWasmFresh)
	}
	return nil
}

// Measure runs a Python Latency or Session job.
func (f *PythonFresh) Measure(ctx context.Context, j Job) (Raw, error) {
	raw, err := measureAfresh(ctx, ImplPythonWasmFresh, j, f.run, f.warmed)
	raw.Note = "the same python.wasm, compiled once, instantiated and initialised (_initialize, ptcx_init) afresh " +
		"for every run: wasmhost without its image (Config.WithImage(false))"
	return raw, err
}

// run is one run of p in a fresh instance, its answer checked.
func (f *PythonFresh) run(ctx context.Context, p Program) error {
	out, err := f.rt.Run(ctx, wasmhost.Program{JS: p.Python, Language: api.LanguagePython}, echoDispatcher(nil))
	if err != nil {
		return fmt.Errorf("%s: %w", ImplPythonWasmFresh, err)
	}
	return CheckAnswer(p, out.Result)
}
