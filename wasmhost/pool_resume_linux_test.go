//go:build linux

package wasmhost

import (
	"context"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// mapped reports whether the page at the start of b is mapped (mincore
// fails with ENOMEM on an address that is not).
func mapped(b []byte) bool {
	var vec [1]byte
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(pageSize), uintptr(unsafe.Pointer(&vec[0])))
	return errno != syscall.ENOMEM
}

// The spare a new one evicts is unmapped, off the caller's path, within
// moments; those kept stay mapped.
func TestRuntime_keepResumeSpare_evictedIsReleased(t *testing.T) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	used := len(rt.image.memory) + pageSize
	var kept [][]byte
	for range rt.resumeSpareCount() + 1 {
		b, ok := reserve(uint64(used), 0)
		require.True(t, ok)
		require.True(t, rt.keepResumeSpare(resumeSpare{mem: b, used: used}))
		kept = append(kept, b)
	}
	require.Eventually(t, func() bool { return !mapped(kept[0]) }, 10*time.Second, time.Millisecond, "the oldest, evicted, is unmapped")
	for _, b := range kept[1:] {
		require.True(t, mapped(b), "the spares kept stay mapped")
	}
}
