package wasmhost

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	wapi "github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// instance is one live guest: a fresh module instance whose engine and
// prelude are initialised, ready for ptcx_start. It is used by one
// goroutine and discarded after one run.
type instance struct {
	mod    wapi.Module
	mem    wapi.Memory
	memory *cappedMemory
	buffer wapi.Function
	start  wapi.Function
	resume wapi.Function
	timer  wapi.Function
	stack  [4]uint64 // parameters and results of export calls

	// The guest's exchange buffer, as last returned by ptcx_buffer.
	bufPtr, bufCap uint32
}

// newInstance returns a fresh instance whose linear memory is capped at
// memoryBytes. It is the one place instances come from, so that a
// snapshot-restored start can replace it without touching the rest.
//
// ctx carries the run, for the host functions the initialisation may call.
func (rt *Runtime) newInstance(ctx context.Context, memoryBytes int64, world *World) (*instance, error) {
	memory := &cappedMemory{limit: uint64(memoryPages(memoryBytes)) * pageSize}
	ictx := experimental.WithMemoryAllocator(ctx, memory.allocator())
	mod, err := rt.wr.InstantiateModule(ictx, rt.module, rt.moduleConfig(world))
	if err != nil {
		return nil, fmt.Errorf("instantiate the guest: %w", err)
	}
	inst := &instance{
		mod:    mod,
		mem:    mod.Memory(),
		memory: memory,
		buffer: mod.ExportedFunction(exportBuffer),
		start:  mod.ExportedFunction(exportStart),
		resume: mod.ExportedFunction(exportResume),
		timer:  mod.ExportedFunction(exportTimer),
	}
	init := mod.ExportedFunction(exportInit)
	if inst.mem == nil || inst.buffer == nil || inst.start == nil || inst.resume == nil || inst.timer == nil || init == nil {
		inst.close(ctx)
		return nil, fmt.Errorf("the guest lacks a ptcx export (is guest.wasm stale? run make guest)")
	}
	ptr, err := inst.write(ctx, rt.prelude)
	if err != nil {
		inst.close(ctx)
		return nil, err
	}
	st := &inst.stack
	st[0], st[1] = uint64(ptr), uint64(len(rt.prelude))
	if err := init.CallWithStack(ctx, st[:]); err != nil {
		inst.close(ctx)
		return nil, err
	}
	if status := wapi.DecodeI32(inst.stack[0]); status != statusDone {
		inst.close(ctx)
		return nil, errInitFailed
	}
	return inst, nil
}

// errBufferFull means the guest could not grow its exchange buffer.
var errBufferFull = errors.New("wasmhost: the guest's exchange buffer cannot grow")

// write copies b, followed by a NUL, into the guest's exchange buffer and
// returns its address there. It calls ptcx_buffer only when the buffer
// must grow.
func (inst *instance) write(ctx context.Context, b []byte) (uint32, error) {
	need := uint64(len(b)) + 1
	if need > math.MaxUint32 {
		return 0, errBufferFull
	}
	if uint32(need) > inst.bufCap {
		st := &inst.stack
		st[0] = need
		if err := inst.buffer.CallWithStack(ctx, st[:]); err != nil {
			return 0, err
		}
		inst.bufPtr, inst.bufCap = wapi.DecodeU32(st[0]), uint32(need)
		if inst.bufPtr == 0 {
			inst.bufCap = 0
			return 0, errBufferFull
		}
	}
	if !inst.mem.Write(inst.bufPtr, b) || !inst.mem.WriteByte(inst.bufPtr+uint32(len(b)), 0) {
		return 0, fmt.Errorf("wasmhost: %s returned %d, outside memory", exportBuffer, inst.bufPtr)
	}
	return inst.bufPtr, nil
}

// close discards the instance and its memory.
func (inst *instance) close(ctx context.Context) {
	_ = inst.mod.Close(context.WithoutCancel(ctx))
}

// moduleConfig returns the configuration of one new instance: a WASI
// reactor with no arguments, environment, files or standard streams, and
// the clock and random source of world (a run's own), else the Config's.
func (rt *Runtime) moduleConfig(world *World) wazero.ModuleConfig {
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions(exportInitialize)
	if world == nil && rt.cfg.deterministic {
		world = &World{Seed: uint64(rt.cfg.seed)}
	}
	if world == nil {
		return mc.WithSysWalltime().WithSysNanotime().WithRandSource(crand.Reader)
	}
	// Fresh clocks and random state per instance: every run sees the same
	// sequence, whatever ran before it.
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], world.Seed)
	epoch := DefaultEpoch.UnixNano()
	if !world.Start.IsZero() {
		epoch = world.Start.UnixNano()
	}
	var wall, mono atomic.Int64
	return mc.
		WithWalltime(func() (int64, int32) {
			t := epoch + wall.Add(1e6) - 1e6
			return t / 1e9, int32(t % 1e9)
		}, sys.ClockResolution(1e6)).
		WithNanotime(func() int64 { return mono.Add(1e6) - 1e6 }, sys.ClockResolution(1e6)).
		WithRandSource(rand.NewChaCha8(seed))
}
