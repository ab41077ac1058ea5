package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"math"

	wapi "github.com/tetratelabs/wazero/api"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// instance is one live guest: a module instance whose engine and prelude
// are initialised, ready for ptcx_start. It is used by one goroutine at a
// time and serves one run, after which it is discarded or, reset to the
// image and as good as new, given back to the warm pool (pool_recycle.go).
type instance struct {
	mod    engine.Instance
	mem    engine.Memory
	memory *cappedMemory
	world  *world.World // its clock and random source, set per run
	buffer engine.Func
	start  engine.Func
	resume engine.Func
	timer  engine.Func
	// Optional exports (nil when the guest has none): reseeding a restored
	// instance (a guest without it is not restored from an image), staging
	// a program's bytecode (bytecode.go), and readying a session's instance
	// for its next program (session.go).
	restored engine.Func
	compile  engine.Func
	load     engine.Func
	next     engine.Func
	stack    [4]uint64 // parameters and results of export calls
	// lazy holds the exports of an instance restored from the image, bound
	// at their first call (bindLazily); unused otherwise.
	lazy [len(boundExports)]export
	// globals are the image's exported mutable globals (image.globals),
	// bound by the first reset (pool_recycle.go).
	globals []engine.Global
	scratch []byte // for reset's page table entries
	// recycled says the instance served a run of tenant before it was
	// reset: it serves only that tenant's runs (pool.take).
	recycled bool
	tenant   string
	// cold says the recycled instance was cooled (pool_recycle.go): its
	// memory is the image's file again, no page of it backed.
	cold bool

	// The guest's exchange buffer, as last returned by ptcx_buffer.
	bufPtr, bufCap uint32
}

// newInstance returns an instance for one run of tenant (Program.Tenant),
// whose linear memory is capped at memoryBytes and whose clock and random
// source are spec's. It is the one place instances come from: with the
// Runtime's image (image.go, the default) it takes a restored or recycled
// instance from the warm pool (pool.go, pool_recycle.go), or restores one
// when the pool has none for the tenant or is off, and reseeds it;
// without (Config.WithImage(false)) it instantiates and initialises a
// fresh one.
//
// ctx carries the run, for the host functions the initialisation may call.
func (rt *Runtime) newInstance(ctx context.Context, memoryBytes int64, spec world.Spec, tenant string) (*instance, error) {
	if rt.image == nil {
		return rt.freshInstance(ctx, memoryBytes, spec)
	}
	limit := uint64(abi.MemoryPages(memoryBytes)) * abi.PageSize
	inst := rt.pool.take(tenant)
	if inst == nil {
		var err error
		if inst, err = rt.restore(ctx, limit); err != nil {
			return nil, err
		}
	}
	// A pooled instance was made for the Runtime's limit: the run's may be
	// lower. Its memory is the image's, below any run's limit.
	inst.limitMemory(limit)
	inst.world.Set(spec)
	st := &inst.stack
	if err := inst.restored.CallWithStack(ctx, st[:]); err != nil {
		inst.close(ctx)
		return nil, fmt.Errorf("wasmhost: %s: %w", abi.ExportRestored, err)
	}
	if status := wapi.DecodeI32(st[0]); status != abi.StatusDone {
		inst.close(ctx)
		return nil, fmt.Errorf("wasmhost: %s failed (status %d): %w", abi.ExportRestored, status, errInitFailed)
	}
	return inst, nil
}

// freshInstance instantiates the guest module and initialises it: the
// engine, its context and the prelude (from its bytecode).
func (rt *Runtime) freshInstance(ctx context.Context, memoryBytes int64, spec world.Spec) (*instance, error) {
	memory := &cappedMemory{limit: uint64(abi.MemoryPages(memoryBytes)) * abi.PageSize}
	w := world.New(spec)
	mod, err := rt.eng.Instantiate(ctx, rt.module, memory, w, true)
	if err != nil {
		return nil, fmt.Errorf("instantiate the guest: %w", err)
	}
	inst, err := bindInstance(mod, memory, w)
	if err != nil {
		return nil, err
	}
	init := mod.Function(abi.ExportInit)
	if init == nil {
		inst.close(ctx)
		return nil, abi.ErrStaleGuest
	}
	st := &inst.stack
	st[0], st[1] = 0, 0 // the Python guest has no prelude (docs/abi.md)
	if len(rt.prelude) > 0 {
		ptr, err := inst.write(ctx, rt.prelude)
		if err != nil {
			inst.close(ctx)
			return nil, err
		}
		st[0], st[1] = uint64(ptr), uint64(len(rt.prelude))
	}
	if err := init.CallWithStack(ctx, st[:]); err != nil {
		inst.close(ctx)
		return nil, err
	}
	if status := wapi.DecodeI32(inst.stack[0]); status != abi.StatusDone {
		inst.close(ctx)
		return nil, errInitFailed
	}
	return inst, nil
}

// boundExports are the exports an instance calls through its fields, in
// their order (instance.bind).
var boundExports = [...]string{abi.ExportBuffer, abi.ExportStart, abi.ExportResume, abi.ExportTimer, abi.ExportRestored, abi.ExportCompile, abi.ExportLoad, exportNext}

// bindInstance binds the exports of a new module instance.
func bindInstance(mod engine.Instance, memory *cappedMemory, w *world.World) (*instance, error) {
	inst := &instance{mod: mod, mem: mod.Memory(), memory: memory, world: w}
	var f [len(boundExports)]engine.Func
	for i, name := range boundExports {
		f[i] = mod.Function(name)
	}
	inst.bind(f)
	if !inst.complete() {
		mod.Close(context.Background())
		return nil, abi.ErrStaleGuest
	}
	return inst, nil
}

// bindLazily is bindInstance for an instance of the image's module, whose
// exports are known (has): each is bound at its first call (export), so
// that an idle pooled instance holds none of them.
func bindLazily(mod engine.Instance, memory *cappedMemory, w *world.World, has *[len(boundExports)]bool) (*instance, error) {
	inst := &instance{mod: mod, mem: mod.Memory(), memory: memory, world: w}
	var f [len(boundExports)]engine.Func
	fields := inst.fields()
	for i, name := range boundExports {
		if has[i] {
			inst.lazy[i] = export{mod: mod, name: name, field: fields[i]}
			f[i] = &inst.lazy[i]
		}
	}
	inst.bind(f)
	if !inst.complete() {
		mod.Close(context.Background())
		return nil, abi.ErrStaleGuest
	}
	return inst, nil
}

// fields returns the instance's export fields, in boundExports' order.
func (inst *instance) fields() [len(boundExports)]*engine.Func {
	return [...]*engine.Func{&inst.buffer, &inst.start, &inst.resume, &inst.timer, &inst.restored, &inst.compile, &inst.load, &inst.next}
}

// bind sets the instance's export fields from f, in boundExports' order.
func (inst *instance) bind(f [len(boundExports)]engine.Func) {
	for i, field := range inst.fields() {
		*field = f[i]
	}
}

// complete reports whether the instance has its memory and the exports
// every run needs.
func (inst *instance) complete() bool {
	return inst.mem != nil && inst.buffer != nil && inst.start != nil && inst.resume != nil && inst.timer != nil
}

// unbind drops the exports bound so far (export): an idle instance gives
// back their call engines and stacks, bound again at their next call.
func (inst *instance) unbind() {
	for i := range inst.lazy {
		if e := &inst.lazy[i]; e.field != nil {
			e.f, *e.field = nil, e
		}
	}
}

// An export is one of an instance's exports, bound at its first call:
// binding one costs the engine a call engine and its stack (wazero's:
// 10 KiB, grown as the guest's stack deepens, and kept), which an idle
// pooled instance need not hold, and which a trivial run needs for four of
// the eight exports. Bound, it puts the function in the instance's field
// that held it (field), so that later calls go to the engine directly; it
// is back there once unbound. It is used by the instance's goroutine only.
type export struct {
	mod   engine.Instance
	name  string
	field *engine.Func // the instance's field that holds the export
	f     engine.Func
}

// CallWithStack implements engine.Func: it binds the export, then calls it.
func (e *export) CallWithStack(ctx context.Context, stack []uint64) error {
	if e.f == nil {
		if e.f = e.mod.Function(e.name); e.f == nil {
			return fmt.Errorf("%w: %s", abi.ErrStaleGuest, e.name)
		}
		if e.field != nil {
			*e.field = e.f
		}
	}
	return e.f.CallWithStack(ctx, stack)
}

// limitMemory lowers the cap of the instance's memory to limit bytes: a
// pooled instance was made for the Runtime's limit, and a run's may be
// lower.
func (inst *instance) limitMemory(limit uint64) {
	inst.setMemoryLimit(min(inst.memory.limit, limit))
}

// linear returns the bytes of the instance's linear memory: the engine's
// where it allocated them (wasmtime), else the host's (cappedMemory).
func (inst *instance) linear() []byte {
	if b := inst.mod.EngineMemory(); b != nil {
		return b
	}
	return inst.memory.buf
}

// setMemoryLimit sets the cap of the instance's memory to limit bytes, on
// the host's side and the engine's, within what the instance was made for:
// a session's instance is made for the Runtime's limit, and each of its
// runs has its own.
func (inst *instance) setMemoryLimit(limit uint64) {
	inst.memory.limit = limit
	inst.mod.LimitMemory(limit)
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
	if !inst.mem.Write(inst.bufPtr, b) || !inst.mem.Write(inst.bufPtr+uint32(len(b)), nul[:]) {
		return 0, fmt.Errorf("wasmhost: %s returned %d, outside memory", abi.ExportBuffer, inst.bufPtr)
	}
	return inst.bufPtr, nil
}

// nul terminates what write copies.
var nul = [1]byte{0}

// close discards the instance and its memory.
func (inst *instance) close(ctx context.Context) {
	inst.mod.Close(ctx)
}

// worldFor returns the world of r: its own (Program.World), else the
// Config's (WithDeterministic), else the real one.
func (rt *Runtime) worldFor(r *run) world.Spec {
	if w := r.prog.World; w != nil {
		spec := world.Spec{Deterministic: true, Seed: w.Seed, Epoch: world.DefaultEpoch}
		if !w.Start.IsZero() {
			spec.Epoch = w.Start.UnixNano()
		}
		return spec
	}
	return world.Spec{Deterministic: rt.cfg.deterministic, Seed: uint64(rt.cfg.seed), Epoch: world.DefaultEpoch}
}
