package wasmhost

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/ptcx/ptcx/wasmhost/internal/abi"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/meter"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
	"github.com/ptcx/ptcx/wasmhost/internal/vmem"
	"github.com/ptcx/ptcx/wasmhost/internal/wasmbin"
	"github.com/ptcx/ptcx/wasmhost/internal/world"
)

// image is the guest's state once initialised: its linear memory and its
// mutable globals right after ptcx_init (engine, context, prelude), made
// once per Runtime, so per guest build. New instances are restored from
// it instead of being initialised (see Config.WithImage): an instance of
// the variant module (image_module.go), which starts with the image's
// globals and no data, whose memory starts with the image's bytes
// (cappedMemory), then reseeded (ptcx_restored).
type image struct {
	memory []byte        // the linear memory, whole pages
	module engine.Module // the variant module
	// fd is a sealed memfd holding memory (Linux), mapped copy-on-write
	// into every restored memory, or -1: memory is then copied.
	fd int
	// The exchange buffer of the initialised guest.
	bufPtr, bufCap uint32
	// What a snapshot (snapshot.go) is checked against: the SHA-256 of
	// the guest module and of memory, and the names of the exported
	// mutable globals, whose values a snapshot carries.
	moduleHash, memoryHash [32]byte
	globals                []string
	globalValues           []uint64 // the image's values of globals, in its order
	engine                 string   // the engine's name and version, for snapshots
	// inModule says the variant module holds memory as its data, which the
	// engine maps copy-on-write into a restored instance (wasmtime).
	inModule bool
	// filled are the OS pages of memory that are not all zeros, when
	// inModule: a restored instance's memory is checked to map them
	// (vmem.MapsImage) before it is taken for the image's mapping.
	filled []uint32
	// reusable says an instance restored from the image can be reset to it
	// and serve another run (pool.go, recycle): the guest's code cannot
	// change its tables (meter.WritesTables). Its memory is reset through
	// the host's bytes of it (instance.linear), the engine's on wasmtime.
	reusable bool
	// exports says which of boundExports the variant module has, so that
	// a restored instance binds each at its first call (bindLazily).
	exports [len(boundExports)]bool
}

// makeImage initialises an instance of the guest module bin, captures it,
// and compiles the variant module to restore it into. copyOnly makes
// restores copy the image even where it could be mapped (tests).
func (rt *Runtime) makeImage(ctx context.Context, bin []byte, copyOnly bool) (*image, error) {
	layout, err := wasmbin.Parse(bin)
	if err != nil {
		return nil, err
	}
	for _, g := range layout.Mutable {
		// The last global is the meter's poll countdown (meter.go), added
		// to every guest: it restarts at its interval, so a restored
		// instance polls the host at most one interval later than the
		// image's would have.
		if g.Export == "" && g.Index != layout.Globals-1 {
			return nil, fmt.Errorf("%w: its mutable global %d is not exported, so its value cannot be captured "+
				"(guest/build.sh exports __stack_pointer; rebuild the guest with make guest)", wasmbin.ErrBadModule, g.Index)
		}
	}
	setup := &run{rt: rt, inbox: newInbox()}
	rctx := context.WithValue(ctx, runKey{}, setup)
	setup.ctx = rctx
	inst, err := rt.freshInstance(rctx, rt.limits.MemoryBytes, world.Spec{Deterministic: true})
	if err != nil {
		return nil, fmt.Errorf("wasmhost: initialise the guest for its image: %w", err)
	}
	defer inst.close(ctx)
	// The image is memory only: a file the guest left open (its
	// descriptor in the memory) would be closed in every instance restored
	// from it.
	if ft, ok := inst.mod.(engine.FileTable); ok {
		if files := ft.Files(); len(files) > 0 {
			return nil, fmt.Errorf("wasmhost: the initialised guest left %d files open (fd %d, %q first): "+
				"an image cannot hold them", len(files), files[0].FD, files[0].Path)
		}
	}
	globals := make([]uint64, len(layout.Mutable))
	for i, g := range layout.Mutable {
		if g.Export == "" {
			globals[i] = pollInterval
			continue
		}
		eg := inst.mod.Global(g.Export)
		if eg == nil {
			return nil, fmt.Errorf("%w: the export %q of global %d is missing", wasmbin.ErrBadModule, g.Export, g.Index)
		}
		globals[i] = eg.Get()
	}
	size := inst.mem.Size()
	data, ok := inst.mem.Read(0, size)
	if !ok || size%abi.PageSize != 0 {
		return nil, fmt.Errorf("wasmhost: the initialised guest's memory of %d bytes cannot be read", size)
	}
	img := &image{memory: append([]byte(nil), data...), fd: -1, bufPtr: inst.bufPtr, bufCap: inst.bufCap,
		moduleHash: sha256.Sum256(bin), engine: rt.eng.Name()}
	img.memoryHash = sha256.Sum256(img.memory)
	for i, g := range layout.Mutable {
		if g.Export != "" {
			img.globals = append(img.globals, g.Export)
			img.globalValues = append(img.globalValues, globals[i])
		}
	}
	writesTables, err := meter.WritesTables(bin, meter.Options{Module: abi.HostModule, Name: "poll"})
	if err != nil {
		return nil, fmt.Errorf("wasmhost: read the guest's code for its image: %w", err)
	}
	variant, inModule, err := rt.eng.ImageModule(layout, img.memory, globals)
	if err != nil {
		return nil, err
	}
	if copyOnly && inModule {
		if variant, err = layout.Variant(size/abi.PageSize, globals); err != nil {
			return nil, err
		}
		inModule = false
	}
	img.inModule = inModule
	if inModule {
		img.filled = vmem.FilledPages(img.memory)
	}
	// A Python instance's WASI state, the files its program opened, is
	// the host's table (engine.FileTable), which reset empties.
	img.reusable = !writesTables
	if img.module, err = rt.eng.Compile(ctx, variant); err != nil {
		return nil, fmt.Errorf("wasmhost: compile the guest's restore module: %w", err)
	}
	for i, name := range boundExports {
		img.exports[i] = img.module.Exports(name)
	}
	if !copyOnly && !inModule {
		img.fd = vmem.SealedFile(img.memory)
	}
	return img, nil
}

// mapInto maps the image copy-on-write over the start of the reservation
// dst, and reports whether it did (else the caller copies it).
func (img *image) mapInto(dst []byte) bool {
	return img.fd >= 0 && vmem.MapFile(dst, img.fd, len(img.memory))
}

// close releases the image's file.
func (img *image) close() {
	if img.fd >= 0 {
		vmem.CloseFile(img.fd)
		img.fd = -1
	}
}

// restore returns a new instance restored from the image, with a memory
// capped at limit bytes, not yet reseeded (newInstance does that once the
// run's world is set).
func (rt *Runtime) restore(ctx context.Context, limit uint64) (*instance, error) {
	img := rt.image
	memory := &cappedMemory{limit: limit, image: img, spares: rt.pool}
	w := &world.World{}
	mod, err := rt.eng.Instantiate(ctx, img.module, memory, w, false)
	if err != nil {
		return nil, fmt.Errorf("restore the guest: %w", err)
	}
	inst, err := bindLazily(mod, memory, w, &img.exports)
	if err != nil {
		return nil, err
	}
	inst.bufPtr, inst.bufCap = img.bufPtr, img.bufCap
	return inst, nil
}

// base is what a snapshot is made and checked against: the guest and the
// image.
func (img *image) base() *snapshot.Base {
	return &snapshot.Base{ModuleHash: img.moduleHash, MemoryHash: img.memoryHash, Engine: img.engine, Memory: img.memory, Globals: img.globals}
}
