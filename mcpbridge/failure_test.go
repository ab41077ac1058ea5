//go:build linux

package mcpbridge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpbridge"
)

// A crash, garbage on stdout and a hang each fail the call in flight with a
// clear message, leave no process behind, and the next call starts a new
// upstream that works.
func TestBridge_failure_restartsOnNextUse(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		timeout  time.Duration
		wantCode api.Code
		want     string
	}{
		{"crash", "up.crash", 0, api.CodeToolFailed,
			`upstream "up" failed while running crash: it exited (exit status 3; stderr: crash: exiting on purpose); it will be restarted on the next call`},
		{"garbage on stdout", "up.garbage", 0, api.CodeToolFailed,
			`upstream "up" failed while running garbage: it broke the protocol: it wrote text that is not JSON to stdout, where only JSON-RPC messages may go: "this is not json"; it will be restarted on the next call`},
		{"hang", "up.freeze", time.Second, api.CodeToolTimeout,
			`upstream "up" did not answer freeze within 1s; it did not answer a ping either, so it was stopped and will be restarted on the next call`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := upstream()
			u.Timeout = tt.timeout
			v := connect(t, u, api.ModeNative, executor.NewConfig())
			before := v.pid(t)

			r := v.call(context.Background(), tt.tool, `{}`)
			require.NotNil(t, r.Err)
			require.Equal(t, tt.wantCode, r.Err.Code)
			require.Equal(t, tt.want, r.Err.Message)
			require.True(t, gone(before), "the old upstream is still running")

			require.JSONEq(t, `{"text":"back"}`, string(v.ok(t, "up.echo", `{"text":"back"}`)))
			after := v.pid(t)
			require.NotEqual(t, before, after)
		})
	}
}

// A call that overruns its timeout is cancelled upstream; an upstream that
// still answers is kept.
func TestBridge_timeout_cancelsAndKeepsUpstream(t *testing.T) {
	u := upstream()
	u.Timeout = 2 * time.Second
	v := connect(t, u, api.ModeNative, executor.NewConfig())
	before := v.pid(t)

	r := v.call(context.Background(), "up.slow", `{"seconds":600}`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeToolTimeout, r.Err.Code)
	require.ErrorIs(t, r.Err, context.DeadlineExceeded)
	require.Equal(t, `upstream "up" did not answer slow within 2s; the request was cancelled`, r.Err.Message)

	eventually(t, func() bool { return v.stat(t, "cancelled") == 1 }, "the upstream never saw the cancellation")
	require.Zero(t, v.stat(t, "running"))
	require.Equal(t, before, v.pid(t))
}

// Cancelling the caller's context cancels the request upstream.
func TestBridge_cancel_cancelsUpstreamRequest(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan api.Result, 1)
	go func() { done <- v.call(ctx, "up.slow", `{"seconds":600}`) }()
	eventually(t, func() bool { return v.stat(t, "running") == 1 }, "slow never started")

	cancel()
	r := <-done
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeAborted, r.Err.Code)
	eventually(t, func() bool { return v.stat(t, "cancelled") == 1 }, "the upstream never saw the cancellation")
	require.Zero(t, v.stat(t, "running"))
}

// An upstream that dies again before answering anything after a restart is
// not restarted at once; calls in between say why and when.
func TestBridge_restart_backsOff(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mcpbridge.SetClock(v.b, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }

	crashed := func() {
		t.Helper()
		r := v.call(context.Background(), "up.crash", `{}`)
		require.NotNil(t, r.Err)
		require.Contains(t, r.Err.Message, "it exited (exit status 3")
	}
	refused := func(times, wait string) {
		t.Helper()
		r := v.call(context.Background(), "up.echo", `{"text":"x"}`)
		require.NotNil(t, r.Err)
		require.Equal(t, api.CodeToolFailed, r.Err.Code)
		require.Equal(t, `upstream "up" stopped again right after it was restarted (`+times+` times in a row; last: it exited (exit status 3; stderr: crash: exiting on purpose)); it will not be restarted for another `+wait, r.Err.Message)
	}

	crashed() // the first death: the next call restarts at once
	crashed() // the restarted upstream died before answering anything
	refused("2", "1s")
	advance(400 * time.Millisecond)
	refused("2", "600ms")
	advance(600 * time.Millisecond)
	crashed() // restarted after 1s, died again at once
	refused("3", "2s")
	advance(2 * time.Second)
	v.ok(t, "up.echo", `{"text":"x"}`) // an answer resets the count
	crashed()
	v.ok(t, "up.echo", `{"text":"x"}`) // restarted at once again
}

func TestBridge_Close_failsCalls(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	done := make(chan api.Result, 1)
	go func() { done <- v.call(context.Background(), "up.slow", `{"seconds":600}`) }()
	eventually(t, func() bool { return v.stat(t, "running") == 1 }, "slow never started")

	require.NoError(t, v.b.Close())
	r := <-done
	require.NotNil(t, r.Err)
	require.Equal(t, `upstream "up" was closed while slow ran`, r.Err.Message)

	r = v.call(context.Background(), "up.echo", `{"text":"x"}`)
	require.NotNil(t, r.Err)
	require.Equal(t, api.CodeToolFailed, r.Err.Code)
	require.Equal(t, `upstream "up" is closed`, r.Err.Message)
	require.NoError(t, v.b.Close(), "a second Close")
}

func TestBridge_Close_leavesNoProcess(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	pid := v.pid(t)
	child := field(t, v.ok(t, "up.spawn", `{}`), "pid")
	require.False(t, gone(pid))
	require.False(t, gone(child))

	require.NoError(t, v.b.Close())
	require.True(t, gone(pid), "the upstream outlived Close")
	// The child is in the upstream's process group, killed with it; its
	// new parent may not have reaped it yet, which counts as gone.
	eventually(t, func() bool { return gone(child) }, "the upstream's child outlived Close")
}

func TestBridge_Close_afterCrashLeavesNoProcess(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	child := field(t, v.ok(t, "up.spawn", `{}`), "pid")
	r := v.call(context.Background(), "up.crash", `{}`)
	require.NotNil(t, r.Err)
	// The upstream's death took its process group with it.
	eventually(t, func() bool { return gone(child) }, "the crashed upstream's child is still running")
	require.NoError(t, v.b.Close())
}
