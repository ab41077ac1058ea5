package wasmhost

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// captureSession encodes the state of inst, a session's instance between
// runs.
func (rt *Runtime) captureSession(inst *instance) ([]byte, error) {
	img := rt.image
	if img == nil {
		return nil, errNoImage
	}
	if rt.closed.Load() {
		return nil, ErrClosed
	}
	size := inst.mem.Size()
	mem, ok := inst.mem.Read(0, size)
	if !ok || int(size)%abi.PageSize != 0 || int(size) < len(img.memory) {
		return nil, fmt.Errorf("wasmhost: the session's memory of %d bytes cannot be read", size)
	}
	globals := make([]uint64, len(img.globals))
	for i, name := range img.globals {
		g := inst.mod.Global(name)
		if g == nil {
			return nil, fmt.Errorf("wasmhost: the guest's global %q is missing", name)
		}
		globals[i] = g.Get()
	}
	return snapshot.EncodeSession(img.base(), mem, globals, inst.bufPtr, inst.bufCap), nil
}

// resumeSession restores a session's instance from its bytes: an instance
// restored from the image (the pool's when one is ready), reserved for the
// Runtime's memory limit, with the bytes' memory and globals written over
// it. The caller sets its world and readies it (ptcx_next).
func (rt *Runtime) resumeSession(ctx context.Context, saved []byte) (*instance, error) {
	if rt.image == nil {
		return nil, errNoImage
	}
	st, err := snapshot.DecodeSession(rt.image.base(), rt.limits.MemoryBytes, saved)
	if err != nil {
		return nil, err
	}
	inst := rt.pool.take("") // a new instance, or one recycled from a run of no tenant
	if inst == nil {
		if inst, err = rt.restore(ctx, uint64(abi.MemoryPages(rt.limits.MemoryBytes))*abi.PageSize); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (*instance, error) {
		inst.close(ctx)
		return nil, err
	}
	if have := inst.mem.Size() / abi.PageSize; st.Pages > have {
		if _, ok := inst.mem.Grow(st.Pages - have); !ok {
			return fail(fmt.Errorf("wasmhost: grow the memory to the session's %d pages", st.Pages))
		}
	}
	for i, b := range st.Blocks {
		if !inst.mem.Write(b*snapshot.BlockSize, st.Data[i*snapshot.BlockSize:(i+1)*snapshot.BlockSize]) {
			return fail(fmt.Errorf("wasmhost: write the session's block %d", b))
		}
	}
	for i, name := range rt.image.globals {
		mg := inst.mod.Global(name)
		if mg == nil || !mg.Set(st.Globals[i]) {
			return fail(fmt.Errorf("wasmhost: the guest's global %q is missing or not mutable", name))
		}
	}
	inst.bufPtr, inst.bufCap = st.BufPtr, st.BufCap
	return inst, nil
}
