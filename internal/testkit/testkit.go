// Package testkit holds what several packages' tests share: whether the
// guest is there to run, one real sandbox per test binary, and a check that
// goroutines were not left behind. Only tests import it.
package testkit

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/wasmhost"
)

// RequireGuestEnv, set to 1 (as `make test` does), makes a missing guest
// fail the tests that need it instead of skipping them; so does CI=true.
const RequireGuestEnv = "PTCX_REQUIRE_GUEST"

// RequireGuest skips the test, saying why and how to build the guest, when
// the guest module is not there: this build embeds none (a plain clone, or
// `make guest` not run) and PTCX_GUEST names none. Where a missing guest
// is a failure, in CI (CI=true) or under `make test` (PTCX_REQUIRE_GUEST=1),
// it fails the test instead: the guest's tests never pass silently there.
func RequireGuest(t testing.TB) {
	t.Helper()
	requireGuest(t, guest.Wasm() != nil || os.Getenv(wasmhost.GuestEnv) != "", os.Getenv)
}

// RequireEmbeddedGuest is RequireGuest for tests of the embedded module
// itself (guest.Wasm), which PTCX_GUEST does not provide.
func RequireEmbeddedGuest(t testing.TB) {
	t.Helper()
	requireGuest(t, guest.Wasm() != nil, os.Getenv)
}

func requireGuest(t testing.TB, present bool, getenv func(string) string) {
	t.Helper()
	if present {
		return
	}
	if truthy(getenv("CI")) || truthy(getenv(RequireGuestEnv)) {
		t.Fatalf("the guest is required here (CI or %s is set) and missing: %v", RequireGuestEnv, wasmhost.ErrNoGuest)
		return
	}
	t.Skipf("skipped: the guest is not built: %v", wasmhost.ErrNoGuest)
}

// InCI says whether the tests run in CI (CI set to a true value, as
// .ci/run sets it): there a missing guest fails a test instead of
// skipping it.
func InCI() bool { return truthy(os.Getenv("CI")) }

func truthy(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// sandboxCommitted is how many runs at the default memory limit the shared
// Sandbox admits at once.
const sandboxCommitted = 2048

var sandbox struct {
	once sync.Once
	rt   *wasmhost.Runtime
	err  error
}

// Sandbox returns a real wasmhost Runtime with the default configuration
// but for admission, created once per test binary: compiling or loading the
// guest is what takes time. Its cap on committed guest memory fits
// sandboxCommitted runs at the default memory limit, since the tests of a
// package share it and hammer tests park hundreds of runs at once
// (admission has tests of its own, with runtimes of their own). Without a
// guest it skips or fails the test (RequireGuest).
func Sandbox(t testing.TB) *wasmhost.Runtime {
	t.Helper()
	RequireGuest(t)
	sandbox.once.Do(func() {
		sandbox.rt, sandbox.err = wasmhost.New(context.Background(), wasmhost.NewConfig().
			WithMaxRuns(sandboxCommitted).WithMaxCommittedMemory(sandboxCommitted*api.DefaultMemoryBytes))
	})
	if sandbox.err != nil {
		t.Fatalf("the sandbox could not start: %v", sandbox.err)
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

// RequirePython skips the test, saying how to build it, when this build
// embeds no Python guest (`make guest-python` not run); in CI (CI=true) it
// fails the test instead.
func RequirePython(t testing.TB) {
	t.Helper()
	if python.Wasm() != nil {
		return
	}
	if InCI() {
		t.Fatalf("the Python guest is required in CI and missing: %v", wasmhost.ErrNoPython)
		return
	}
	t.Skipf("skipped: the Python guest is not built: %v", wasmhost.ErrNoPython)
}
