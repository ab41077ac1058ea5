//go:build linux

package mcpbridge_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/mcpbridge"
)

// Many concurrent calls while the upstream crashes and is restarted under
// them: every call settles, successes carry the right value, failures are
// clear tool errors, and Close leaves no process behind.
func TestBridge_hammer_concurrentCallsAndCrashes(t *testing.T) {
	v := connect(t, upstream(), api.ModeNative, executor.NewConfig())
	// A clock that jumps a minute per reading: restarts are never delayed,
	// so the test is about concurrency, not the back-off.
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mcpbridge.SetClock(v.b, func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Minute)
		return now
	})

	const workers, calls = 8, 20
	var wg sync.WaitGroup
	errs := make(chan string, workers*calls+3)
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				text := fmt.Sprintf("w%d-%d", w, i)
				r := v.call(context.Background(), "up.echo", `{"text":"`+text+`"}`)
				switch {
				case r.Err == nil:
					if string(r.Value) != `{"text":"`+text+`"}` {
						errs <- "wrong value " + string(r.Value) + " for " + text
					}
				case r.Err.Code != api.CodeToolFailed || !strings.HasPrefix(r.Err.Message, `upstream "up" `):
					errs <- "unclear failure: " + r.Err.Error()
				}
			}
		})
	}
	wg.Go(func() {
		for range 3 {
			r := v.call(context.Background(), "up.crash", `{}`)
			if r.Err == nil || !strings.HasPrefix(r.Err.Message, `upstream "up" `) {
				errs <- fmt.Sprintf("crash: %+v", r)
			}
		}
	})
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	pid := v.pid(t)
	require.NoError(t, v.b.Close())
	require.True(t, gone(pid))
}
