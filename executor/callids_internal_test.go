package executor

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every ID callIDs hands out is the run's ID, ":ptc:" and the number, as
// the numbers come: consecutive (across batches of every size), repeated,
// going back, jumping ahead, at the largest number, and for a run whose
// ID is empty or long.
func TestCallIDs(t *testing.T) {
	for _, run := range []string{"call_7", "", string(make([]byte, 5000))} {
		var c callIDs
		nums := []int64{}
		for n := int64(1); n <= 100; n++ {
			nums = append(nums, n)
		}
		nums = append(nums, 100, 3, 4, 1_000_000, 1_000_001, 999_999, math.MaxInt64-1, math.MaxInt64, 0, -5)
		for _, n := range nums {
			require.Equal(t, run+":ptc:"+strconv.FormatInt(n, 10), c.id(run, n), "number %d", n)
		}
	}
}

// A batch holds at most maxCallIDs IDs, and the first holds one: a run of
// one call writes no ID it does not use.
func TestCallIDs_batches(t *testing.T) {
	var c callIDs
	c.id("r", 1)
	require.Equal(t, 1, c.n)
	require.Equal(t, "r:ptc:1", c.text)
	for n := int64(2); n < 200; n++ {
		c.id("r", n)
		require.LessOrEqual(t, c.n, maxCallIDs)
	}
	require.Equal(t, maxCallIDs, c.n)
}
