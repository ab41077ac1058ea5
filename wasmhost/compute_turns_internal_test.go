package wasmhost

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/admit"
	"github.com/ptcx/ptcx/wasmhost/internal/cpuclock"
)

// The watchdog reads the CPU time of the guest's thread from another one:
// a thread that sleeps uses none, one that spins uses about its wall time.
func TestRun_cpuUsed(t *testing.T) {
	if !cpuclock.Supported {
		r := &run{}
		_, ok := r.cpuUsed()
		require.False(t, ok, "no thread clock: the watchdog judges in wall time")
		return
	}
	for _, spin := range []bool{false, true} {
		r := &run{}
		_, ok := r.cpuUsed()
		require.False(t, ok, "not started")
		// The spinner burns 150 ms of its thread's CPU time, however long
		// that takes on a loaded machine; the sleeper sleeps 300 ms.
		const burn = 150 * time.Millisecond
		started, spun, finish, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan int64)
		go func() {
			r.startCPU(0)
			close(started)
			if spin {
				for start := cpuclock.Now(); cpuclock.Now()-start < int64(burn); {
				}
			} else {
				time.Sleep(300 * time.Millisecond)
			}
			close(spun)
			<-finish
			stopped <- r.stopCPU()
		}()
		<-started
		<-spun
		got, ok := r.cpuUsed()
		require.True(t, ok)
		if spin {
			require.GreaterOrEqual(t, got, int64(burn))
		} else {
			require.Less(t, got, int64(50*time.Millisecond))
		}
		close(finish)
		require.GreaterOrEqual(t, <-stopped, got, "the export's charge includes what the watchdog saw")
		_, ok = r.cpuUsed()
		require.False(t, ok, "stopped")
	}
}

// A guest that computes gives up its slot to a waiting guest of another
// tenant every tenant quantum, to one of its own tenant every slot quantum,
// and else its thread to ready goroutines every goQuantum; a guest not
// charged CPU time (a short export) never does.
func TestRun_polled_turns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // a goroutine started now stays ready: nothing else can run it
	ms := int64(time.Millisecond)
	const none = "-" // no guest waits
	for _, tc := range []struct {
		name          string
		cpuOn         bool
		waiter        string // the waiting guest's tenant ("" is the run's own)
		ready         bool
		since         int64 // since the slot was taken and the last look
		want          turn
		wantGoAtMoved bool
	}{
		{"short export", false, "other", true, 20 * ms, turnNone, false},
		{"below the go quantum", true, none, true, ms - 1, turnNone, false},
		{"at the go quantum, goroutines ready", true, none, true, ms, turnGo, true},
		{"past the go quantum, goroutines ready", true, none, true, 2 * ms, turnGo, true},
		{"below the tenant quantum, another tenant's guest waits", true, "other", true, ms - 1, turnNone, false},
		{"at the tenant quantum, another tenant's guest waits", true, "other", true, ms, turnSlot, false},
		{"below the slot quantum, a guest of its tenant waits", true, "", true, 10*ms - 1, turnGo, true},
		{"at the slot quantum, a guest of its tenant waits", true, "", true, 10 * ms, turnSlot, false},
		{"past the slot quantum, a guest of its tenant waits", true, "", false, 11 * ms, turnSlot, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := admit.New(1, 0)
			r := &run{rt: &Runtime{slots: g}, cpuOn: tc.cpuOn}
			const at = int64(time.Hour)
			r.slotAt, r.goAt = at, at
			if tc.waiter != none {
				require.True(t, g.TryAcquire("", 0))
				go func() { _ = g.Acquire(context.Background(), time.Time{}, tc.waiter, 0) }()
				for !g.Waiting() {
					runtime.Gosched()
				}
				defer g.Release(0)
			}
			if tc.ready {
				done := make(chan struct{})
				go close(done)
				defer func() { <-done }()
			}
			require.Equal(t, tc.want, r.polled(at+tc.since))
			require.Equal(t, tc.wantGoAtMoved, r.goAt != at)
		})
	}
}

func TestGoroutinesReady(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	done := make(chan struct{})
	go close(done)
	require.True(t, goroutinesReady(), "a goroutine started on the only P waits for it")
	<-done
}
