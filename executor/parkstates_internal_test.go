package executor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The remembered parked states, below, at and past their bound: resumed
// ones are forgotten oldest first once max are remembered; held ones never
// are (forgetting one would let its bytes be restored twice while it is
// live); a released one can be held again.
func TestParkedStates_bound(t *testing.T) {
	s := parkedStates{max: 3}
	require.True(t, s.hold("a"))
	require.True(t, s.hold("b"))
	s.resumed("a")
	s.resumed("b")
	require.False(t, s.hold("a"), "below the bound a resumed state is remembered")
	require.True(t, s.hold("c")) // at the bound now: a, b resumed, c held
	require.True(t, s.hold("d"), "past it the oldest resumed state goes")
	require.True(t, s.hold("a"), "a was forgotten")
	require.False(t, s.hold("c"), "c is held: never forgotten")

	held := parkedStates{max: 2}
	for _, k := range []string{"h1", "h2", "h3", "h4"} {
		require.True(t, held.hold(k))
	}
	for _, k := range []string{"h1", "h2", "h3", "h4"} {
		require.False(t, held.hold(k), "%s is still held, past the bound too", k)
	}
	held.release("h1")
	require.True(t, held.hold("h1"), "a released state can be held again")
}
