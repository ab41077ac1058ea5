package wasmhost

import (
	"github.com/ptcx/ptcx/wasmhost/internal/cpuclock"
)

// ThreadCPU and ThreadClocks let the tests burn a given amount of CPU time
// on the guest's thread, however loaded the machine is.
var ThreadCPU = cpuclock.Now

const ThreadClocks = cpuclock.Supported

// Recycles reports whether rt resets settled runs' instances for the next
// run (wazero's; on wasmtime the module holds the image's memory, so never).
func Recycles(rt *Runtime) bool { return rt.image.reusable }

// WithoutPython makes the package act as a build without the Python guest
// until the returned function is called.
func WithoutPython() (restore func()) {
	w, l := embeddedPythonWasm, embeddedPythonLib
	embeddedPythonWasm = func() []byte { return nil }
	return func() { embeddedPythonWasm, embeddedPythonLib = w, l }
}

// PythonPoolStats returns the pool counters of rt's Python Runtime (made
// by a Python run or Prepare).
func PythonPoolStats(rt *Runtime) PoolStats { return rt.python.rt.PoolStats() }

// SetPythonRecycles turns the recycling of rt's Python Runtime's instances
// on or off (benchmarks: the cost of a run without it, in the same run).
func SetPythonRecycles(rt *Runtime, on bool) { rt.python.rt.image.reusable = on }

// PythonRuntime returns rt's Python Runtime (made by a Python run or
// Prepare). A program run on it directly is not checked by Run's
// pythonFor: tests suspend Python runs this way until Runtime.Run does.
func PythonRuntime(rt *Runtime) *Runtime { return rt.python.rt }
