package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/serve/internal/fence"
	"github.com/ptcx/ptcx/serve/store"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Another node is gone only once this node's wall clock is past its
// lease's until plus the fence's margin.
func TestCluster_gone_onlyPastLeasePlusMargin(t *testing.T) {
	c := &Cluster{Fence: fence.New("n1", time.Second, time.Now, func(uint64) {})}
	l := store.Lease{Node: "n2", Until: t0}
	tests := []struct {
		name string
		at   time.Duration
		gone bool
	}{
		{"at its until", 0, false},
		{"below until + margin", 200*time.Millisecond - time.Nanosecond, false},
		{"at until + margin", 200 * time.Millisecond, false},
		{"past until + margin", 200*time.Millisecond + time.Nanosecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.gone, c.gone(l, t0.Add(tt.at)))
		})
	}
}
