// Package testkit holds what several packages' tests share: one real
// sandbox per test binary, and a check that goroutines were not left
// behind. Only tests import it.
package testkit

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ptcx/ptcx/wasmhost"
)

var sandbox struct {
	once sync.Once
	rt   *wasmhost.Runtime
	err  error
}

// Sandbox returns a real wasmhost Runtime with the default configuration,
// created once per test binary: compiling or loading the guest is what
// takes time. It fails the test when the guest is not built.
func Sandbox(t testing.TB) *wasmhost.Runtime {
	t.Helper()
	sandbox.once.Do(func() {
		sandbox.rt, sandbox.err = wasmhost.New(context.Background(), wasmhost.NewConfig())
	})
	if sandbox.err != nil {
		t.Fatalf("the sandbox needs the guest (run `make guest`): %v", sandbox.err)
	}
	return sandbox.rt
}

// WaitGoroutines polls until at most n goroutines remain, or fails the test
// with a dump of them after within. It polls from the test's goroutine:
// require.Eventually would add one of its own to the count.
func WaitGoroutines(t testing.TB, n int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); runtime.NumGoroutine() > n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 4<<20)
			t.Fatalf("goroutines left behind: want at most %d, have %d\n%s", n, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
	}
}

// Close closes the sandbox, if a test created it; call it from TestMain
// after m.Run.
func Close() {
	if sandbox.rt != nil {
		_ = sandbox.rt.Close(context.Background())
	}
}
