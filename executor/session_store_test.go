package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
)

// fakeSessionStore is a SessionStore in a map, whose operations fail
// with the errors set.
type fakeSessionStore struct {
	mu                         sync.Mutex
	saved                      map[string][]byte
	loadErr, saveErr, deleteEr error
	saves, deletes             int
}

func newFakeSessionStore() *fakeSessionStore {
	return &fakeSessionStore{saved: map[string][]byte{}}
}

func (f *fakeSessionStore) Load(_ context.Context, scope, name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loadErr != nil {
		return nil, f.loadErr
	}
	return bytes.Clone(f.saved[scope+"/"+name]), nil
}

func (f *fakeSessionStore) Save(_ context.Context, scope, name string, b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saves++
	if f.saveErr != nil {
		return f.saveErr
	}
	f.saved[scope+"/"+name] = bytes.Clone(b)
	return nil
}

func (f *fakeSessionStore) Delete(_ context.Context, scope, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes++
	if f.deleteEr != nil {
		return f.deleteEr
	}
	delete(f.saved, scope+"/"+name)
	return nil
}

func (f *fakeSessionStore) get(key string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.saved[key]
}

func (f *fakeSessionStore) set(key string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saved[key] = b
}

func (f *fakeSessionStore) fail(load, save, del error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loadErr, f.saveErr, f.deleteEr = load, save, del
}

// storeExecutor is an executor on the real sandbox keeping its sessions
// in st.
func storeExecutor(t *testing.T, st executor.SessionStore, l executor.SessionLimits) *executor.Executor {
	t.Helper()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)).WithSessions(l).WithSessionStore(st))
	t.Cleanup(func() {
		for _, s := range e.Sessions("") {
			e.DropSession(context.Background(), "", s.Name)
		}
	})
	return e
}

// logsOf returns the logs of a successful run_code call.
func logsOf(t *testing.T, r api.Result) []string {
	t.Helper()
	require.Nil(t, r.Err, "%v", r.Err)
	var v executor.RunCodeValue
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return v.Logs
}

// captureLog sends slog's default logger to a buffer until the test ends.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

const storeKey = "deployment/s"

func TestExecutor_SessionStore_anotherExecutorContinues(t *testing.T) {
	st := newFakeSessionStore()
	one, two := storeExecutor(t, st, executor.SessionLimits{}), storeExecutor(t, st, executor.SessionLimits{})
	require.Equal(t, `41`, resultOf(t, inSession(one, "", "s", `globalThis.n = 41; const k = "kept"; return n`)))
	require.NotEmpty(t, st.get(storeKey))
	require.Equal(t, `[42,"kept"]`, resultOf(t, inSession(two, "", "s", `n++; return [n, k]`)))

	// one still holds its own copy (41) until it drops it.
	require.Equal(t, `41`, resultOf(t, inSession(one, "", "s", `return n`)))
	require.Equal(t, `42`, resultOf(t, inSession(two, "", "s", `return n`)))
	require.True(t, one.DropSession(context.Background(), "", "s"))
	require.False(t, one.DropSession(context.Background(), "", "s"))
	require.NotEmpty(t, st.get(storeKey), "dropping keeps the store's copy")
	require.Equal(t, `42`, resultOf(t, inSession(one, "", "s", `return n`)), "the store holds what two saved last")
}

func TestExecutor_SessionStore_closeDeletes(t *testing.T) {
	st := newFakeSessionStore()
	e := storeExecutor(t, st, executor.SessionLimits{})
	resultOf(t, inSession(e, "", "s", `globalThis.n = 1; return n`))
	require.NotNil(t, st.get(storeKey))
	require.True(t, closedOK(t)(e.CloseSession(context.Background(), "", "s")))
	require.Nil(t, st.get(storeKey))
	require.Equal(t, `"undefined"`, resultOf(t, inSession(e, "", "s", `return typeof n`)))

	// A session this process never held is deleted from the store too.
	other := storeExecutor(t, st, executor.SessionLimits{})
	require.False(t, closedOK(t)(other.CloseSession(context.Background(), "", "s")))
	require.Nil(t, st.get(storeKey))
}

func TestExecutor_SessionStore_closeFailureIsReturned(t *testing.T) {
	st := newFakeSessionStore()
	e := storeExecutor(t, st, executor.SessionLimits{})
	resultOf(t, inSession(e, "", "s", `globalThis.n = 1; return n`))
	unreachable := errors.New("store unreachable")
	st.fail(nil, nil, unreachable)
	had, err := e.CloseSession(context.Background(), "", "s")
	require.True(t, had, "this process's copy is dropped all the same")
	require.ErrorIs(t, err, unreachable)
	require.ErrorContains(t, err, `run_code session "s" of scope "deployment" was closed here but could not be deleted from the session store`)
	require.NotNil(t, st.get(storeKey), "the store's copy stays")
	require.Equal(t, `1`, resultOf(t, inSession(e, "", "s", `return n`)), "and the next call naming the session loads it")

	// A CloseSession that succeeds deletes it.
	st.fail(nil, nil, nil)
	require.True(t, closedOK(t)(e.CloseSession(context.Background(), "", "s")))
	require.Nil(t, st.get(storeKey))
	require.Equal(t, `"undefined"`, resultOf(t, inSession(e, "", "s", `return typeof n`)))
}

func TestExecutor_SessionStore_loadFailureIsBusy(t *testing.T) {
	st := newFakeSessionStore()
	st.fail(errors.New("connection refused"), nil, nil)
	e := storeExecutor(t, st, executor.SessionLimits{})
	r := inSession(e, "", "s", `globalThis.ran = true; return 1`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeBusy, r.Err.Code)
	require.Contains(t, r.Err.Message, `session "s" could not be loaded from the session store (connection refused); nothing ran, retry later`)
	require.Empty(t, e.Sessions(""))

	st.fail(nil, nil, nil)
	require.Equal(t, `"undefined"`, resultOf(t, inSession(e, "", "s", `return typeof ran`)))
}

func TestExecutor_SessionStore_lostStateStartsAfresh(t *testing.T) {
	st := newFakeSessionStore()
	st.fail(fmt.Errorf("%w: its snapshot is missing", executor.ErrSessionLost), nil, nil)
	e := storeExecutor(t, st, executor.SessionLimits{})
	r := inSession(e, "", "s", `return typeof n`)
	require.Equal(t, `"undefined"`, resultOf(t, r))
	require.Contains(t, logsOf(t, r)[0], "[ptcx] the session's saved state could not be restored, so this program starts afresh")
	require.Contains(t, logsOf(t, r)[0], "its snapshot is missing")
}

func TestExecutor_SessionStore_saveFailureIsANotice(t *testing.T) {
	log := captureLog(t)
	st := newFakeSessionStore()
	st.fail(nil, errors.New("bucket missing"), nil)
	e := storeExecutor(t, st, executor.SessionLimits{})
	r := inSession(e, "", "s", `globalThis.n = 7; console.log("mine"); return n`)
	require.Equal(t, `7`, resultOf(t, r), "the result stands")
	logs := logsOf(t, r)
	require.Len(t, logs, 2)
	require.Contains(t, logs[0], "[ptcx] the session's state could not be saved to the session store (bucket missing)")
	require.Equal(t, "mine", logs[1])
	require.Contains(t, log.String(), "could not be saved to the session store")
	require.Contains(t, log.String(), "bucket missing")
	require.Equal(t, `7`, resultOf(t, inSession(e, "", "s", `return n`)), "this process keeps the state")
}

func TestExecutor_SessionStore_corruptStateStartsAfresh(t *testing.T) {
	st := newFakeSessionStore()
	st.set(storeKey, []byte("PTCXSESS but not really a session's bytes, only some text"))
	e := storeExecutor(t, st, executor.SessionLimits{})
	r := inSession(e, "", "s", `return typeof n`)
	require.Equal(t, `"undefined"`, resultOf(t, r))
	require.Contains(t, logsOf(t, r)[0], "[ptcx] the session's saved state could not be restored, so this program starts afresh")
}

// TestExecutor_SessionStore_maxBytesOnLoad loads a saved state at, below
// and past MaxBytes.
func TestExecutor_SessionStore_maxBytesOnLoad(t *testing.T) {
	st := newFakeSessionStore()
	resultOf(t, inSession(storeExecutor(t, st, executor.SessionLimits{}), "", "s", `globalThis.n = 5; return n`))
	saved := st.get(storeKey)
	size := len(saved)
	for _, tc := range []struct {
		name     string
		maxBytes int
		restored bool
	}{
		{"below", size + 1, true},
		{"at", size, true},
		{"past", size - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st.set(storeKey, saved)
			r := inSession(storeExecutor(t, st, executor.SessionLimits{MaxBytes: tc.maxBytes}), "", "s", `return typeof n`)
			if tc.restored {
				require.Equal(t, `"number"`, resultOf(t, r))
				return
			}
			require.Equal(t, `"undefined"`, resultOf(t, r))
			require.Contains(t, logsOf(t, r)[0], "the session's saved state was not restored, so this program starts afresh")
			require.Contains(t, logsOf(t, r)[0], "over the limit of")
		})
	}
}

// TestExecutor_SessionStore_maxBytesOnSave saves a state below and past
// MaxBytes: past it, the state is reset here and deleted from the store.
func TestExecutor_SessionStore_maxBytesOnSave(t *testing.T) {
	const big = `globalThis.data = Array.from({length: 20000}, (_, i) => "item" + i * 7919); return data.length`
	st := newFakeSessionStore()
	resultOf(t, inSession(storeExecutor(t, st, executor.SessionLimits{}), "", "s", big))
	size := len(st.get(storeKey))
	for _, tc := range []struct {
		name     string
		maxBytes int
		kept     bool
	}{
		{"below", 2 * size, true},
		{"past", size / 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st.set(storeKey, nil)
			e := storeExecutor(t, st, executor.SessionLimits{MaxBytes: tc.maxBytes})
			r := inSession(e, "", "s", big)
			require.Equal(t, `20000`, resultOf(t, r), "the result stands")
			if tc.kept {
				require.NotNil(t, st.get(storeKey))
				require.Equal(t, `"object"`, resultOf(t, inSession(e, "", "s", `return typeof data`)))
				return
			}
			require.Contains(t, logsOf(t, r)[0], "[ptcx] the session's state was reset after this program: saved, it took")
			require.Nil(t, st.get(storeKey))
			require.Equal(t, `"undefined"`, resultOf(t, inSession(e, "", "s", `return typeof data`)))
		})
	}
}

func TestExecutor_SessionStore_scopesAreSeparateKeys(t *testing.T) {
	st := newFakeSessionStore()
	reg := registry.New()
	require.NoError(t, reg.DeclareMode(registry.Deployment, api.ModePTC))
	require.NoError(t, reg.NewScope("agent", registry.Deployment))
	e := newExecutor(t, reg, executor.NewConfig().WithRuntime(realRuntime(t)).WithSessionStore(st))
	resultOf(t, inSession(e, "", "same", `globalThis.secret = 1; return 1`))
	resultOf(t, inSession(e, "agent", "same", `return 2`))
	require.NotNil(t, st.get("deployment/same"))
	require.NotNil(t, st.get("agent/same"))
	e.DropSession(context.Background(), "agent", "same")
	require.Equal(t, `"undefined"`, resultOf(t, inSession(e, "agent", "same", `return typeof secret`)))
	require.True(t, closedOK(t)(e.CloseSession(context.Background(), "", "same")))
	require.True(t, closedOK(t)(e.CloseSession(context.Background(), "agent", "same")))
	require.Nil(t, st.get("deployment/same"))
	require.Nil(t, st.get("agent/same"))
}
