package wasmhost_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// exportedSession returns the bytes of a session of rt whose program
// defined a few globals, and the session (live).
func exportedSession(t testing.TB, rt *wasmhost.Runtime) ([]byte, *wasmhost.Session) {
	t.Helper()
	s := newSession(t, rt)
	requireResult(t, rt, s, `const a = 40; let list = [1, 2]; globalThis.g = {k: "v"}; function f() { return a + list.length; } return f()`, `42`)
	b, err := s.Export(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, b)
	return b, s
}

func TestSession_Export_liveStaysLive(t *testing.T) {
	rt := newRuntime(t, testConfig())
	b, s := exportedSession(t, rt)
	require.Equal(t, wasmhost.SessionLive, s.State())
	requireResult(t, rt, s, `list.push(3); return f()`, `43`)

	// The bytes are those of the state when exported, not after.
	again, err := rt.ImportSession(context.Background(), b)
	require.NoError(t, err)
	requireResult(t, rt, again, `return f()`, `42`)
}

func TestSession_Export_suspendedReturnsItsBytes(t *testing.T) {
	rt := newRuntime(t, testConfig())
	_, s := exportedSession(t, rt)
	n, err := s.Suspend(context.Background())
	require.NoError(t, err)
	b, err := s.Export(context.Background())
	require.NoError(t, err)
	require.Len(t, b, n)
	require.Equal(t, wasmhost.SessionSuspended, s.State())
	b[0] = 'X' // the caller's copy: the session keeps its own
	requireResult(t, rt, s, `return [f(), g.k]`, `[42, "v"]`)
}

func TestSession_Export_emptyClosedBusy(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	b, err := s.Export(context.Background())
	require.NoError(t, err)
	require.Nil(t, b)

	busy := newSession(t, rt)
	done := make(chan *wasmhost.RunError, 1)
	go func() {
		_, re := runIn(t, rt, busy, `await tools.slow({ms: 300}); return 1`, api.Limits{})
		done <- re
	}()
	require.Eventually(t, func() bool { return busy.State() == wasmhost.SessionRunning }, 5*time.Second, time.Millisecond)
	_, err = busy.Export(context.Background())
	require.ErrorIs(t, err, wasmhost.ErrSessionBusy)
	require.Nil(t, <-done)

	s.Close(context.Background())
	_, err = s.Export(context.Background())
	require.ErrorIs(t, err, wasmhost.ErrSessionClosed)
}

func TestRuntime_ImportSession_newRuntime(t *testing.T) {
	b, _ := exportedSession(t, newRuntime(t, testConfig()))
	other := newRuntime(t, testConfig())
	s, err := other.ImportSession(context.Background(), b)
	require.NoError(t, err)
	require.Equal(t, wasmhost.SessionSuspended, s.State())
	require.Equal(t, len(b), s.Bytes())
	requireResult(t, other, s, `return [f(), g.k, typeof a]`, `[42, "v", "number"]`)
	require.Equal(t, wasmhost.SessionLive, s.State())
}

func TestRuntime_ImportSession_refusals(t *testing.T) {
	rt := newRuntime(t, testConfig())
	b, _ := exportedSession(t, rt)
	cut := b[:len(b)/2]
	corrupt := append([]byte(nil), b...)
	corrupt[len(corrupt)-20] ^= 0xff
	otherImage := append([]byte(nil), b...)
	otherImage[8+4+32] ^= 0xff // the image hash
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"nil", nil, "not a ptcx session"},
		{"not a session", []byte("hello, this is not a session at all, only some bytes"), "not a ptcx session"},
		{"truncated", cut, "inflate"},
		{"corrupt", corrupt, "cannot be restored"},
		{"another image", otherImage, "another guest or initialised image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.ImportSession(context.Background(), tc.b)
			require.ErrorIs(t, err, wasmhost.ErrSessionBytes)
			require.ErrorContains(t, err, tc.want)
		})
	}

	closed, err := wasmhost.New(context.Background(), testConfig())
	require.NoError(t, err)
	require.NoError(t, closed.Close(context.Background()))
	_, err = closed.ImportSession(context.Background(), b)
	require.ErrorIs(t, err, wasmhost.ErrClosed)

	noImage := newRuntime(t, testConfig().WithImage(false))
	_, err = noImage.ImportSession(context.Background(), b)
	require.ErrorContains(t, err, "sessions need the Runtime's initialised image")
}

// TestRuntime_ImportSession_memoryLimit imports a session whose memory is
// at, below and past the importing Runtime's memory limit.
func TestRuntime_ImportSession_memoryLimit(t *testing.T) {
	rt := newRuntime(t, testConfig())
	s := newSession(t, rt)
	requireResult(t, rt, s, `globalThis.big = new Uint8Array(8 << 20).fill(1); return big.length`, `8388608`)
	size := int64(s.Bytes()) // the live session's memory: what a Runtime must allow to import it
	require.Greater(t, size, int64(8<<20))
	b, err := s.Export(context.Background())
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		limit int64
		ok    bool
	}{
		{"below", size + 4<<20, true},
		{"at", size, true},
		{"past", size - 64<<10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newRuntime(t, testConfig().WithLimits(api.Limits{MemoryBytes: tc.limit}))
			got, err := other.ImportSession(context.Background(), b)
			if !tc.ok {
				require.ErrorIs(t, err, wasmhost.ErrSessionBytes)
				require.ErrorContains(t, err, "over the memory limit")
				return
			}
			require.NoError(t, err)
			require.Equal(t, wasmhost.SessionSuspended, got.State())
			if tc.limit > size { // at the limit, a program has no room to run in it
				requireResult(t, other, got, `return big[12345]`, `1`)
			}
		})
	}
}

// TestRuntime_ImportSession_acrossProcesses exports a session in one
// process and continues it in another, twice.
func TestRuntime_ImportSession_acrossProcesses(t *testing.T) {
	if step := os.Getenv("PTCX_SESSION_CHILD"); step != "" {
		sessionChild(t, step, os.Getenv("PTCX_SESSION_FILE"))
		return
	}
	file := filepath.Join(t.TempDir(), "session")
	for _, step := range []string{"define", "increment", "check"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRuntime_ImportSession_acrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PTCX_SESSION_CHILD="+step, "PTCX_SESSION_FILE="+file, "PTCX_SNAPSHOT_CACHE="+cacheDir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child %s: %s", step, out)
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	s, err := sharedRuntime(t).ImportSession(context.Background(), b)
	require.NoError(t, err)
	requireResult(t, sharedRuntime(t), s, `return n`, `43`)
}

// sessionChild is one process of TestRuntime_ImportSession_acrossProcesses.
func sessionChild(t *testing.T, step, file string) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.NewConfig().WithCompilationCacheDir(os.Getenv("PTCX_SNAPSHOT_CACHE")))
	require.NoError(t, err)
	defer rt.Close(ctx)
	var s *wasmhost.Session
	js, want := `var n = 41; return n`, `41`
	if step == "define" {
		s, err = rt.NewSession(ctx)
	} else {
		b, rerr := os.ReadFile(file)
		require.NoError(t, rerr)
		s, err = rt.ImportSession(ctx, b)
		js, want = `n++; return n`, `42`
		if step == "check" {
			js, want = `n++; return n`, `43`
		}
	}
	require.NoError(t, err)
	requireResult(t, rt, s, js, want)
	b, err := s.Export(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o600))
}

// FuzzRuntime_ImportSession feeds ImportSession real session bytes and
// mutations of them: it refuses them with ErrSessionBytes or returns a
// session whose next run ends (in a result or a RunError), never a panic.
func FuzzRuntime_ImportSession(f *testing.F) {
	rt := sharedRuntime(f)
	b, _ := exportedSession(f, rt)
	f.Add(b)
	f.Add(b[:len(b)-1])
	f.Add(b[:70])
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := rt.ImportSession(context.Background(), b)
		if err != nil {
			require.ErrorIs(t, err, wasmhost.ErrSessionBytes)
			return
		}
		defer s.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = rt.Run(ctx, wasmhost.Program{JS: `return typeof f`, Tools: toolNames, Session: s}, &tools{})
		if err != nil {
			var re *wasmhost.RunError
			require.ErrorAs(t, err, &re)
		}
	})
}
