package wasmhost_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/wasmhost"
)

// argsOf is a program that calls echo with arguments of exactly n bytes of
// JSON ({"s":"xxx..."}) and reports how the call went.
func argsOf(n int) string {
	return `try { await tools.echo({s: "x".repeat(` + strconv.Itoa(n-8) + `)}); return "ok" } catch (e) { return e.name + ": " + e.message }`
}

func TestRuntime_Run_maxCallArgBytes(t *testing.T) {
	rt := sharedRuntime(t)
	limits := api.Limits{MaxCallArgBytes: 1000}
	tests := []struct {
		name string
		size int
		want string
	}{
		{"below the limit", 999, "ok"},
		{"at the limit", 1000, "ok"},
		{"past the limit", 1001, "ToolCallError: the arguments are 1001 bytes, over the limit of 1000 bytes for one nested call: pass less data per call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, d := runJS(t, rt, argsOf(tt.size), limits)
			require.Nil(t, re)
			require.JSONEq(t, strconv.Quote(tt.want), string(out.Result))
			if tt.want == "ok" {
				require.Len(t, d.seen(), 1)
				require.Len(t, d.seen()[0].Args, tt.size)
				require.Equal(t, 1, out.Stats.Calls)
			} else {
				require.Empty(t, d.seen(), "the refused call is not dispatched")
				require.Zero(t, out.Stats.Calls)
			}
		})
	}
}

// A lower in-flight limit lowers the per-call one: a single call over it,
// with nothing else in flight, is told to pass less data per call.
func TestRuntime_Run_inFlightBoundsOneCall(t *testing.T) {
	rt := sharedRuntime(t)
	for _, tt := range []struct {
		size int
		want string
	}{
		{2999, "ok"},
		{3000, "ok"},
		{3001, "ToolCallError: the arguments are 3001 bytes, over the limit of 3000 bytes for one nested call: pass less data per call"},
	} {
		out, re, _ := runJS(t, rt, argsOf(tt.size), api.Limits{MaxInFlightArgBytes: 3000})
		require.Nil(t, re)
		require.JSONEq(t, strconv.Quote(tt.want), string(out.Result), tt.size)
	}
}

// Refused calls count toward MaxCalls, so a program cannot loop on them:
// below the limit each is refused and the next one made; at it, the next
// call is refused for the total, and none was dispatched.
func TestRuntime_Run_refusedCallsCountTowardMaxCalls(t *testing.T) {
	rt := sharedRuntime(t)
	js := `const msgs = []; for (let i = 0; i < 4; i++) { try { await tools.echo({s: "x".repeat(2000)}) } catch (e) { msgs.push(e.message) } } return msgs`
	out, re, d := runJS(t, rt, js, api.Limits{MaxCallArgBytes: 1000, MaxCalls: 3})
	require.Nil(t, re)
	var msgs []string
	require.NoError(t, json.Unmarshal(out.Result, &msgs))
	require.Len(t, msgs, 4)
	for _, m := range msgs[:3] {
		require.Contains(t, m, "over the limit of 1000 bytes for one nested call")
	}
	require.NotContains(t, msgs[3], "for one nested call", "the fourth call is past MaxCalls: %s", msgs[3])
	require.Empty(t, d.seen())
	require.Zero(t, out.Stats.Calls)
}

func TestRuntime_Run_maxInFlightArgBytes(t *testing.T) {
	rt := sharedRuntime(t)
	// Calls of 1000 bytes of arguments to a tool that answers after 50 ms.
	// The refusals are caught; once the first wave is answered, a call of
	// the full size passes again.
	js := `
		const big = (n) => ({ms: 50, s: "x".repeat(n - 16)}); // {"ms":50,"s":"..."} is n bytes
		const wave = [];
		const results = [];
		for (let i = 0; i < CALLS; i++) wave.push(tools.slow(big(1000)).then(() => "ok", (e) => e.message));
		results.push(...await Promise.all(wave));
		results.push(await tools.slow(big(1000)).then(() => "ok", (e) => e.message));
		return results`
	tests := []struct {
		name  string
		calls int
		want  []string
	}{
		{"below the limit", 2, []string{"ok", "ok", "ok"}},
		{"at the limit", 3, []string{"ok", "ok", "ok", "ok"}},
		{"past the limit", 4, []string{"ok", "ok", "ok",
			"the nested calls pending hold 3000 bytes of arguments, and this call's 1000 more would pass the limit of 3000 bytes at once: await some of them before starting more",
			"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, re, d := runJS(t, rt, strings.ReplaceAll(js, "CALLS", strconv.Itoa(tt.calls)), api.Limits{MaxInFlightArgBytes: 3000})
			require.Nil(t, re)
			var got []string
			require.NoError(t, json.Unmarshal(out.Result, &got))
			require.Equal(t, tt.want, got)
			require.Len(t, d.seen(), min(tt.calls, 3)+1)
		})
	}
}

// keeper is a Dispatcher that keeps every call's arguments until release,
// when it answers them all and forgets them, as a well-behaved executor does
// by the end of a run. It watches the arguments through weak pointers.
type keeper struct {
	mu    sync.Mutex
	held  []json.RawMessage
	dones []func(wasmhost.CallResult)
	weak  []weak.Pointer[byte]
}

func (k *keeper) Dispatch(_ string, args json.RawMessage, done func(wasmhost.CallResult)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held = append(k.held, args)
	k.dones = append(k.dones, done)
	k.weak = append(k.weak, weak.Make(&args[0]))
}

func (k *keeper) release() {
	k.mu.Lock()
	dones := k.dones
	k.held, k.dones = nil, nil
	k.mu.Unlock()
	for _, done := range dones {
		done(wasmhost.CallResult{OK: true, Value: json.RawMessage(`1`)})
	}
}

func (k *keeper) live() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, w := range k.weak {
		if w.Value() != nil {
			n++
		}
	}
	return n
}

// Once a run has returned, the host holds none of its calls' arguments:
// whether the calls were answered (the run settled) or still pending (the
// run failed at its wall limit), the arguments become garbage as soon as
// the dispatcher drops them.
func TestRuntime_Run_argumentsAreNotHeldAfterTheRun(t *testing.T) {
	rt := sharedRuntime(t)
	const calls, size = 20, 1 << 20
	js := `const s = "x".repeat(` + strconv.Itoa(size) + `); const ps = [];
		for (let i = 0; i < ` + strconv.Itoa(calls) + `; i++) ps.push(tools.keep({s}));
		return (await Promise.all(ps)).length`
	for _, answered := range []bool{true, false} {
		t.Run("answered "+strconv.FormatBool(answered), func(t *testing.T) {
			k := &keeper{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for {
					k.mu.Lock()
					n := len(k.held)
					k.mu.Unlock()
					if n == calls {
						if answered {
							k.release()
						}
						return
					}
					select {
					case <-ctx.Done():
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			out, err := rt.Run(ctx, wasmhost.Program{JS: js, Tools: []string{"keep"},
				Limits: api.Limits{WallTime: 2 * time.Second, MaxInFlightArgBytes: 64 << 20}}, k)
			if answered {
				require.NoError(t, err)
				require.JSONEq(t, strconv.Itoa(calls), string(out.Result))
			} else {
				require.Error(t, err)
				k.release()
			}
			require.Equal(t, calls, len(k.weak))
			require.Eventually(t, func() bool {
				runtime.GC()
				return k.live() == 0
			}, 5*time.Second, 10*time.Millisecond, "arguments still reachable after the run")
		})
	}
}
