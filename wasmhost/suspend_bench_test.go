package wasmhost

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// heldHeaps are programs holding 2 MiB of heap and waiting on one call:
// random doubles (which compress badly) and 9,400 small objects (bench's
// heldHeap: 2,077 KiB by QuickJS-NG's own count).
var heldHeaps = []struct{ name, js string }{
	{"doubles", `globalThis.big = new Float64Array(262144).map(() => Math.random());
		return (await tools.a({})).length + big.length;`},
	{"objects", `globalThis.big = Array.from({length: 9400}, (_, i) => ({id: i, name: "item " + i, tags: ["a", "b"]}));
		return (await tools.a({})).length + big.length;`},
}

// suspendedHeap returns a Runtime (no pool: every restore is on the
// measured path) and the decoded snapshot of heldHeap.
func suspendedHeap(b *testing.B, js string) (*Runtime, *snapshot.State, *Suspended) {
	ctx := context.Background()
	rt, err := New(ctx, NewConfig().WithPool(0))
	require.NoError(b, err)
	b.Cleanup(func() { rt.Close(ctx) })
	out, err := rt.Run(ctx, Program{JS: js, Tools: []string{"a"}, Suspend: func(Quiescence) bool { return true }},
		DispatcherFunc(func(_ string, _ json.RawMessage, done func(CallResult)) { done(CallResult{OK: true}) }))
	require.NoError(b, err)
	require.NotNil(b, out.Suspended)
	st, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, out.Suspended.Snapshot)
	require.NoError(b, err)
	return rt, st, out.Suspended
}

// BenchmarkSnapshot_2MiB measures, in one run, the costs of a program
// holding 2 MiB of heap: restoring a fresh instance from the image (the
// baseline every run pays), suspending (diffing the memory against the
// image, copying the blocks that differ, the checksum; the memory is read
// in place, from a resumed instance: what a run suspends from), into a new
// buffer (a first suspension, cold), into one of the Runtime's free list
// (a first suspension in steady state) and into the buffer of the
// snapshot before, and
// resuming (checking, restoring an instance from the image and writing the
// snapshot's blocks over it); and, for a host that stores
// snapshots compressed, CompressSnapshot and resuming from its output. It
// reports the snapshot's sizes.
func BenchmarkSnapshot_2MiB(b *testing.B) {
	for _, h := range heldHeaps {
		b.Run(h.name, func(b *testing.B) { benchmarkSnapshot(b, h.js) })
	}
}

func benchmarkSnapshot(b *testing.B, js string) {
	rt, st, s := suspendedHeap(b, js)
	ctx := context.Background()
	mem := wholeMemory(rt.image, st)
	limit := uint64(abi.MemoryPages(rt.limits.MemoryBytes)) * abi.PageSize
	b.Run("restore-baseline", func(b *testing.B) {
		reportCPU(b, func() {
			for b.Loop() {
				inst, err := rt.restore(ctx, limit)
				if err != nil {
					b.Fatal(err)
				}
				inst.close(ctx)
			}
		})
	})
	b.Run("memcpy-baseline", func(b *testing.B) {
		dst := make([]byte, s.RawBytes)
		reportCPU(b, func() {
			for b.Loop() {
				copy(dst, mem[len(mem)-s.RawBytes:])
			}
		})
	})
	// What a run suspends from: an instance's memory, as resuming the
	// snapshot leaves it.
	r := &run{rt: rt, limits: rt.limits, ctx: ctx, resuming: st}
	inst, err := r.restoreSnapshot()
	require.NoError(b, err)
	defer inst.close(ctx)
	live, ok := inst.mem.Read(0, inst.mem.Size())
	require.True(b, ok)
	require.Equal(b, mem, live)
	enc := *st
	enc.Memory = live
	b.Run("suspend", func(b *testing.B) {
		reportCPU(b, func() {
			for b.Loop() {
				if _, _, err := snapshot.Encode(rt.image.base(), &enc, nil, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(len(s.Snapshot)), "snapshot-bytes")
		b.ReportMetric(float64(s.RawBytes), "raw-bytes")
		b.ReportMetric(float64(len(mem)), "memory-bytes")
	})
	b.Run("suspend-recycled", func(b *testing.B) {
		// A first suspension in steady state: into a buffer of the free
		// list, given back once its snapshot is done with
		// (RecycleSnapshot, Resumption.Recycle).
		reportCPU(b, func() {
			for b.Loop() {
				buf, _, err := snapshot.Encode(rt.image.base(), &enc, nil, rt.takeSnapshotBuffer, rt.keepSnapshotBuffer)
				if err != nil {
					b.Fatal(err)
				}
				rt.keepSnapshotBuffer(buf)
			}
		})
	})
	b.Run("suspend-reused", func(b *testing.B) {
		// Into the buffer of the snapshot before (Resumption.SnapshotBuffer).
		var buf []byte
		reportCPU(b, func() {
			for b.Loop() {
				var err error
				if buf, _, err = snapshot.Encode(rt.image.base(), &enc, buf, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	// Steady state: each resume's memory is kept as a resume spare
	// (pool_resume.go), and the next resume is restored into it.
	b.Run("resume", func(b *testing.B) { benchmarkResume(b, rt, s.Snapshot, false) })
	// Cold: no resume spare, as a first resume.
	b.Run("resume-cold", func(b *testing.B) { benchmarkResume(b, rt, s.Snapshot, true) })
	compressed, err := CompressSnapshot(s.Snapshot)
	require.NoError(b, err)
	b.Run("compress", func(b *testing.B) {
		reportCPU(b, func() {
			for b.Loop() {
				if _, err := CompressSnapshot(s.Snapshot); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(len(compressed)), "compressed-bytes")
	})
	b.Run("resume-compressed", func(b *testing.B) { benchmarkResume(b, rt, compressed, false) })
}

// benchmarkResume decodes snapshot and restores an instance from it; with
// cold, into a memory no resume spare backs (each is released as its
// instance closes).
func benchmarkResume(b *testing.B, rt *Runtime, snap []byte, cold bool) {
	ctx := context.Background()
	reportCPU(b, func() {
		for b.Loop() {
			dst, err := snapshot.Decode(rt.image.base(), rt.limits.MemoryBytes, snap)
			if err != nil {
				b.Fatal(err)
			}
			r := &run{rt: rt, limits: rt.limits, ctx: ctx, resuming: dst}
			inst, err := r.restoreSnapshot()
			if err != nil {
				b.Fatal(err)
			}
			inst.close(ctx)
			for cold && rt.yieldResumeSpare() {
			}
		}
	})
	for rt.yieldResumeSpare() {
	}
}
