package quota

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRetained_ChargeEvent_bound(t *testing.T) {
	tests := []struct {
		name string
		held int // bytes of live events before
		ok   bool
	}{
		{"below the budget", 5, true},
		{"to the budget", 6, true},
		{"past the budget", 7, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &gauge{}
			r := NewRetained(10, g)
			require.True(t, r.ChargeEvent(tt.held))
			require.Equal(t, tt.ok, r.ChargeEvent(4))
			want := int64(tt.held)
			if tt.ok {
				want += 4
			}
			require.Equal(t, want, shown(g), "a refused event counts nothing")
		})
	}
}

func TestRetained_nilHasNoBudget(t *testing.T) {
	var r *Retained
	require.True(t, r.ChargeEvent(1<<40))
}

func TestRetained_Settle_Over_Forget(t *testing.T) {
	g := &gauge{}
	r := NewRetained(100, g)
	require.True(t, r.ChargeEvent(30))
	require.Equal(t, int64(90), r.Settle(30, 60), "its events' and its result's bytes")
	require.Equal(t, int64(90), shown(g))
	require.False(t, r.Over(), "below the budget")
	require.Equal(t, int64(10), r.Settle(0, 10))
	require.False(t, r.Over(), "at the budget")
	require.Equal(t, int64(1), r.Settle(0, 1))
	require.True(t, r.Over(), "past the budget")
	r.Forget(90)
	require.False(t, r.Over())
	require.Equal(t, int64(11), shown(g))
	require.True(t, r.ChargeEvent(89), "settled bytes do not stop live events")
	require.False(t, r.ChargeEvent(12), "the live events' own budget")
}

// TestRetained_hammer charges, settles and forgets from many goroutines
// (run it under -race): what is left is what was not given back.
func TestRetained_hammer(t *testing.T) {
	const workers, each = 8, 500
	g := &gauge{}
	r := NewRetained(1<<40, g)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if !r.ChargeEvent(3) {
					t.Error("an event refused within the budget")
					return
				}
				n := r.Settle(3, 5)
				_ = r.Over()
				r.Forget(n)
			}
		}()
	}
	wg.Wait()
	require.Zero(t, shown(g))
	require.False(t, r.Over())
}
