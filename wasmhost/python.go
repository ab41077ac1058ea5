package wasmhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest/python"
	"github.com/ptcx/ptcx/wasmhost/internal/engine"
	"github.com/ptcx/ptcx/wasmhost/internal/snapshot"
)

// The Python guest (Program.Language LanguagePython): CPython 3.13 for
// wasm32-wasi (package guest/python), speaking the same guest ABI as the
// QuickJS guest but for the prelude (ptcx_init takes none) and the
// bytecode cache (it has no ptcx_compile). It runs in a Runtime of its own,
// made at the first Python run and kept, whose compiled module, image and
// warm pool are Python's: it shares its parent's admission (its pooled
// instances are charged to the same committed memory), guest slots and
// runners, and closes with it. Its engine is its parent's kind (wazero or
// wasmtime), made to mount a file system (engine.LookupFS): its instances
// see the standard library's zip, read-only, at /usr/local/lib, their only
// file system, served by WASI file functions of the host's own (package
// wasifs), whose table of the files an instance has open is the host's:
// emptied when the instance is recycled (pool_recycle.go), carried by a
// snapshot (suspend.go).

var (
	// ErrNoPython is returned by a Python run when this build embeds no
	// Python guest.
	ErrNoPython = errors.New("wasmhost: this build of ptcx has no Python guest: build it with `make guest-python` " +
		"in the ptcx checkout (then rebuild ptcx)")
	// ErrPythonEngine is returned by a Python run on a Runtime whose engine
	// cannot mount the Python guest's read-only file system. Both engines
	// there are (EngineWazero, EngineWasmtime) can: it is for an engine
	// added without that.
	ErrPythonEngine = errors.New("wasmhost: this engine cannot run Python programs: " +
		"it cannot mount the Python guest's read-only file system")
)

// embeddedPythonWasm and embeddedPythonLib are package python's; tests
// replace them to act as a build without the Python guest.
var (
	embeddedPythonWasm = python.Wasm
	embeddedPythonLib  = python.Lib
)

// meteredPython is the embedded Python guest metered, once per process.
var meteredPython = sync.OnceValues(func() ([]byte, error) { return meterGuest(embeddedPythonWasm()) })

// pythonModuleHash is the SHA-256 of the metered Python guest: its
// images' module hash (image.go), which names the snapshots and sessions
// its runs make. Known without making a Python Runtime, so that bytes of
// another guest never make one (guestOf).
var pythonModuleHash = sync.OnceValues(func() ([32]byte, error) {
	bin, err := meteredPython()
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(bin), nil
})

// pythonGuest is a Runtime's Python Runtime, made once.
type pythonGuest struct {
	mu  sync.Mutex
	rt  *Runtime
	err error // why it could not be made (kept: the next run fails alike)
	// made is rt once made, read without mu (other): a TypeScript run
	// short of memory does not wait for a Python guest being compiled.
	made atomic.Pointer[Runtime]
}

// Prepare readies the guest of lang now rather than at its first run:
// for LanguagePython it compiles the Python guest, initialises its image
// and fills its pool, and fails as a Python run would (ErrNoPython,
// ErrPythonEngine). TypeScript's is ready from New.
func (rt *Runtime) Prepare(ctx context.Context, lang api.Language) error {
	_, err := rt.forLanguage(ctx, lang)
	return err
}

// forLanguage returns the Runtime that runs lang's programs: rt for
// TypeScript, its Python Runtime for Python (made the first time).
func (rt *Runtime) forLanguage(ctx context.Context, lang api.Language) (*Runtime, error) {
	switch lang.Canonical() {
	case api.LanguageTypeScript:
		return rt, nil
	case api.LanguagePython:
	default:
		_, err := api.ParseLanguage(string(lang))
		return nil, fmt.Errorf("wasmhost: %w", err)
	}
	if rt.lang == api.LanguagePython {
		return rt, nil
	}
	g := &rt.python
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.rt != nil || g.err != nil {
		return g.rt, g.err
	}
	if rt.closed.Load() {
		return nil, ErrClosed
	}
	g.rt, g.err = rt.newPython(ctx)
	if g.rt != nil {
		g.made.Store(g.rt)
	}
	return g.rt, g.err
}

// newPython makes rt's Python Runtime.
func (rt *Runtime) newPython(ctx context.Context) (*Runtime, error) {
	// Not built first: whatever the engine, building the guest comes first.
	lib := embeddedPythonLib()
	if embeddedPythonWasm() == nil || lib == nil {
		return nil, ErrNoPython
	}
	newFS, err := pythonEngine(rt.cfg.engineName())
	if err != nil {
		return nil, err
	}
	bin, err := meteredPython()
	if err != nil {
		return nil, fmt.Errorf("wasmhost: the Python guest: %w", err)
	}
	cfg := rt.cfg
	cfg.bytecodeEntries = 0 // no ptcx_compile
	py := &Runtime{cfg: cfg, lang: api.LanguagePython, limits: rt.limits, parent: rt,
		slots: rt.slots, admission: rt.admission, admitWait: rt.admitWait, runners: rt.runners,
		startInline: true}
	py.closing, py.closeRuns = context.WithCancelCause(rt.closing)
	eng, err := newFS(lib, python.StdlibMount)(ctx, rt.limits.MemoryBytes, cfg.cacheDir, hostImports)
	if err != nil {
		return nil, err
	}
	py.eng = eng
	if err := py.setUp(ctx, bin); err != nil {
		_ = py.Close(ctx)
		return nil, fmt.Errorf("wasmhost: the Python guest: %w", err)
	}
	return py, nil
}

// pythonEngine returns the factory of the engine name's Python engines,
// which mount the standard library: CheckEngine's error when this build
// cannot run name, ErrPythonEngine when the engine cannot mount a file
// system.
func pythonEngine(name string) (engine.FSFactory, error) {
	if err := CheckEngine(name); err != nil {
		return nil, err
	}
	newFS, ok := engine.LookupFS(name)
	if !ok {
		return nil, ErrPythonEngine
	}
	return newFS, nil
}

// closePython closes rt's Python Runtime, if it made one.
func (rt *Runtime) closePython(ctx context.Context) {
	g := &rt.python
	g.mu.Lock()
	py := g.rt
	if py == nil && g.err == nil {
		g.err = ErrClosed
	}
	g.mu.Unlock()
	if py != nil {
		_ = py.Close(ctx)
	}
}

// other is the other language's Runtime sharing rt's admission: its
// parent for a Python Runtime, else its Python Runtime (nil when there is
// none), whose pool and live sessions give memory up to a run as rt's do.
func (rt *Runtime) other() *Runtime {
	if rt.parent != nil {
		return rt.parent
	}
	return rt.python.made.Load()
}

// root is the Runtime that made rt, for a language Runtime, or rt.
func (rt *Runtime) root() *Runtime {
	if rt.parent != nil {
		return rt.parent
	}
	return rt
}

// otherPool is the pool of rt.other, or nil.
func (rt *Runtime) otherPool() *pool {
	if o := rt.other(); o != nil {
		return o.pool
	}
	return nil
}

// otherSessions are the live sessions of rt.other, or nil.
func (rt *Runtime) otherSessions() *liveSessions {
	if o := rt.other(); o != nil {
		return &o.sessions
	}
	return nil
}

// pythonFor returns the Runtime for p, a program whose language is not
// rt's: rt's Python Runtime, once p is one it can run.
func (rt *Runtime) pythonFor(ctx context.Context, p Program) (*Runtime, error) {
	lang := p.Language.Canonical()
	if rt.lang == api.LanguagePython || lang != api.LanguagePython {
		_, err := api.ParseLanguage(string(p.Language))
		if err == nil {
			err = fmt.Errorf("wasmhost: a %s program on the Python guest's Runtime", lang.Title())
		}
		return nil, fmt.Errorf("wasmhost: %w", err)
	}
	if err := p.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("wasmhost: invalid program limits: %w", err)
	}
	if err := lang.CheckMemory(p.Limits.Within(rt.limits).MemoryBytes); err != nil {
		return nil, fmt.Errorf("wasmhost: %w", err)
	}
	return rt.forLanguage(ctx, lang)
}

// guestOf returns the Runtime whose guest made b, bytes of a snapshot or a
// session given to rt: rt's Python Runtime (made the first time) for bytes
// of the Python guest, else rt, whose decoding refuses bytes of any other
// guest saying which module made them. Bytes of the Python guest on a
// Runtime that cannot run Python fail with CheckPython's error. A
// snapshot or session therefore always resumes on its own language's
// Runtime: its module hash is the guest's.
func (rt *Runtime) guestOf(ctx context.Context, b []byte) (*Runtime, error) {
	m := snapshot.ModuleOf(b)
	if m == nil || rt.lang == api.LanguagePython || (rt.image != nil && bytes.Equal(m, rt.image.moduleHash[:])) {
		return rt, nil
	}
	if embeddedPythonWasm() == nil || embeddedPythonLib() == nil {
		return rt, nil // no Python guest: rt's decoding says whose bytes they are not
	}
	h, err := pythonModuleHash()
	if err != nil || !bytes.Equal(m, h[:]) {
		return rt, nil
	}
	py, err := rt.forLanguage(ctx, api.LanguagePython)
	if err != nil {
		return nil, fmt.Errorf("wasmhost: the bytes were made by the Python guest, which this Runtime cannot run: %w", err)
	}
	return py, nil
}

// SnapshotLanguage returns the language of the guest that made b, bytes of
// a snapshot or a session, from the module hash they carry: TypeScript
// for rt's QuickJS guest, Python for this build's Python guest, "" for
// bytes of neither (Resume and ImportSession refuse those, saying whose
// they are). It compiles nothing: a caller that knows the language its
// record claims checks the bytes against it before resuming them.
func (rt *Runtime) SnapshotLanguage(b []byte) api.Language {
	m := snapshot.ModuleOf(b)
	root := rt.root()
	switch {
	case m == nil:
		return ""
	case root.image != nil && bytes.Equal(m, root.image.moduleHash[:]):
		return api.LanguageTypeScript
	case embeddedPythonWasm() == nil || embeddedPythonLib() == nil:
		return ""
	}
	if h, err := pythonModuleHash(); err == nil && bytes.Equal(m, h[:]) {
		return api.LanguagePython
	}
	return ""
}

// CheckPython reports, without compiling anything, whether this build can
// run Python programs on the engine name ("" for NewConfig's): nil,
// ErrNoPython, ErrPythonEngine, or CheckEngine's error for the name.
func CheckPython(name string) error {
	if name == "" {
		name, _ = defaultEngine()
	}
	if err := CheckEngine(name); err != nil {
		return err
	}
	if embeddedPythonWasm() == nil || embeddedPythonLib() == nil {
		return ErrNoPython
	}
	_, err := pythonEngine(name)
	return err
}
