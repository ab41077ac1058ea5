package wasmhost

import (
	"context"
	"fmt"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/wasifs"
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
	var files []wasifs.File
	if ft, ok := inst.mod.(engine.FileTable); ok {
		files = ft.Files()
	}
	return snapshot.EncodeSession(img.base(), mem, globals, inst.bufPtr, inst.bufCap, files)
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
	if err := restoreSessionFiles(inst.mod, st.Files); err != nil {
		return fail(err)
	}
	inst.bufPtr, inst.bufCap = st.BufPtr, st.BufCap
	return inst, nil
}

// restoreSessionFiles reopens the files a session's guest had open in
// mod's file table (empty: the instance is new or recycled, whose reset
// emptied it), refusing the bytes (ErrSessionBytes) when one cannot be,
// as restoreFiles refuses a snapshot.
func restoreSessionFiles(mod engine.Instance, files []wasifs.File) error {
	if len(files) == 0 {
		return nil
	}
	ft, ok := mod.(engine.FileTable)
	if !ok {
		return fmt.Errorf("%w: they have %d open files and the engine's instances have no file table", ErrSessionBytes, len(files))
	}
	if err := ft.RestoreFiles(files); err != nil {
		return fmt.Errorf("%w: their open files: %v", ErrSessionBytes, err)
	}
	return nil
}
