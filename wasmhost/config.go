package wasmhost

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/guest"
)

// Config configures a Runtime. It is immutable: every With method returns a
// modified copy, so a Config can be shared and specialised freely.
//
// The zero Config is not valid; start from NewConfig.
type Config struct {
	engine        string // WithEngine; "": defaultEngine
	engineFromEnv bool   // engine is EngineEnv's (NewConfig), not WithEngine's: New's error names the variable
	cacheDir      string
	deterministic bool
	seed          int64
	limits        api.Limits
	guest         []byte // the guest module (WithGuest); nil: see guestModule
	admission     admissionConfig
	noImage       bool // WithImage(false)
	copyRestore   bool // restores copy the image instead of mapping it (tests)
	pool          int  // WithPool: idle instances
	// WithBytecodeCache: entries (0: off) and bytes.
	bytecodeEntries int
	bytecodeBytes   int64
}

// NewConfig returns the default configuration:
//
//   - the wazero engine (WithEngine), or the one the PTCX_ENGINE
//     environment variable names (EngineEnv);
//   - the on-disk compilation cache in DefaultCacheDir (compiling the guest
//     takes about half a second; loading it from the cache about 40 ms, and
//     New as a whole 60 to 90 ms on the development VM);
//   - the real clock and crypto/rand as the guest's time and random source;
//   - DefaultLimits as the Runtime's limits;
//   - the default guest slots and admission caps (see WithGuestSlots,
//     WithMaxRuns, WithMaxCommittedMemory and WithAdmissionWait);
//   - instances restored from the initialised image (WithImage), a warm
//     pool of DefaultPoolSize of them (WithPool) and a bytecode cache of
//     DefaultBytecodeEntries programs and DefaultBytecodeBytes
//     (WithBytecodeCache).
func NewConfig() Config {
	engine, fromEnv := defaultEngine()
	return Config{engine: engine, engineFromEnv: fromEnv, cacheDir: DefaultCacheDir(), limits: api.DefaultLimits(),
		admission: admissionConfig{wait: DefaultAdmissionWait}, pool: DefaultPoolSize,
		bytecodeEntries: DefaultBytecodeEntries, bytecodeBytes: DefaultBytecodeBytes}
}

// WithEngine selects the WebAssembly engine the guest runs on: EngineWazero
// (the default) or EngineWasmtime (builds with the wasmtime build tag;
// Engines lists what this build has). New fails on an unknown name, and on
// wasmtime in a build without it.
func (c Config) WithEngine(name string) Config {
	c.engine, c.engineFromEnv = name, false
	return c
}

// engineName is the engine WithEngine chose, else wazero.
func (c Config) engineName() string {
	if c.engine == "" {
		return EngineWazero
	}
	return c.engine
}

// WithImage turns the initialised image on or off. On (the default), New
// initialises the guest once (engine, context, prelude), captures its
// memory and globals, and every run's instance is restored from that
// image, copy-on-write where the platform allows (Linux: a sealed memfd
// mapped private over the instance's memory; elsewhere the image is
// copied), then reseeded (Math.random, the performance.now origin) from
// the run's clock and random source. A restored instance starts in about a
// tenth of the time and holds a fraction of the private memory. Off, every
// run instantiates and initialises a fresh guest (the path before images,
// kept as a baseline); the warm pool is then off too.
func (c Config) WithImage(on bool) Config {
	c.noImage = !on
	return c
}

// WithPool sets how many restored instances the Runtime keeps ready, so a
// run does not wait for its restore: a run takes one, a background
// goroutine restores another. Each pooled instance is charged to the
// committed memory cap (WithMaxCommittedMemory) for the image's size, and
// the pool gives instances up when a run does not fit beside them. An
// instance serves one run; then, if the run settled by itself without
// growing its memory, it is reset to the image and joins the pool again
// (up to twice its size: pool_recycle.go), else it is discarded. Zero turns the
// pool off (runs restore their own instance); it is off as well without the
// image. New fails for a negative size or one above MaxPoolSize. Default:
// DefaultPoolSize.
func (c Config) WithPool(n int) Config {
	c.pool = n
	return c
}

// WithBytecodeCache bounds the cache of programs' bytecode: a program seen
// before (the same JavaScript, by SHA-256) is not compiled again, its
// bytecode, compiled by the engine in an earlier run before any of that
// run's code ran, is loaded instead. At most entries programs and bytes
// bytes are kept, the least recently used dropped first; a program whose
// bytecode alone is larger than bytes is not cached. entries 0 turns the
// cache off. New fails for a negative entries, or a positive entries with
// bytes below 1. Default: DefaultBytecodeEntries and DefaultBytecodeBytes.
func (c Config) WithBytecodeCache(entries int, bytes int64) Config {
	c.bytecodeEntries, c.bytecodeBytes = entries, bytes
	return c
}

// checkStartup rejects start-up options no Runtime can use.
func (c Config) checkStartup() error {
	switch {
	case c.pool < 0:
		return fmt.Errorf("wasmhost: a pool of %d instances: the size must be positive (0 turns the pool off)", c.pool)
	case c.pool > MaxPoolSize:
		return fmt.Errorf("wasmhost: a pool of %d instances is above the maximum of %d", c.pool, MaxPoolSize)
	case c.bytecodeEntries < 0:
		return fmt.Errorf("wasmhost: a bytecode cache of %d entries: the count must be positive (0 turns the cache off)", c.bytecodeEntries)
	case c.bytecodeEntries > 0 && c.bytecodeBytes < 1:
		return fmt.Errorf("wasmhost: a bytecode cache of %d bytes: the size must be positive (0 entries turns the cache off)", c.bytecodeBytes)
	}
	return nil
}

// poolSize returns the pool's size: 0 when off.
func (c Config) poolSize() int {
	if c.noImage {
		return 0
	}
	return c.pool
}

// DefaultCacheDir returns the default compilation cache directory,
// ptcx/wazero under os.UserCacheDir, or "" (no cache) when the user has no
// cache directory.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "ptcx", "wazero")
}

// WithCompilationCacheDir stores compiled guest code in dir, created if
// missing (wasmtime's in its subdirectory wasmtime/, by version). The empty string turns the on-disk cache off: every New then
// compiles the guest from scratch. Default: DefaultCacheDir().
func (c Config) WithCompilationCacheDir(dir string) Config {
	c.cacheDir = dir
	return c
}

// WithDeterministic makes every run see the same world: a clock that starts
// at 2022-01-01T00:00:00Z and advances 1 ms per reading, and a random source
// seeded with seed, so Math.random and Date repeat exactly from run to run
// (for replay and tests). Timers count from a virtual clock that advances
// only as timers fire, so they fire in an order fixed by their delays
// (see World). Default: the real clock and crypto/rand.
func (c Config) WithDeterministic(seed int64) Config {
	c.deterministic = true
	c.seed = seed
	return c
}

// WithLimits sets the Runtime's limits: the ceiling of every run's limits.
// Zero fields take their defaults (DefaultLimits). Default: DefaultLimits().
func (c Config) WithLimits(l api.Limits) Config {
	c.limits = l
	return c
}

// The defaults and bounds of a Config.
const (
	// Admission (WithMaxRuns, WithMaxCommittedMemory, WithAdmissionWait).

	// DefaultAdmissionWait is how long a run waits for admission: longer
	// than a typical run, so that a burst queues rather than fails.
	DefaultAdmissionWait = 30 * time.Second
	// DefaultRunsPerSlot times the guest slots is the default cap on
	// concurrent runs. A run mostly waits on its tools, holding no slot,
	// and an idle run costs about 2 MB of host memory, a few goroutines and
	// no file descriptor: 256 runs per core keep the cores busy even when
	// runs wait 99% of the time, and bound idle instances to about 512 MB
	// per core. What the runs grow to is bounded by the committed memory
	// cap; this one bounds the count.
	DefaultRunsPerSlot = 256
	// DefaultCommittedMemoryPercent of the machine's memory (MemTotal of
	// /proc/meminfo, or the cgroup's memory.max when lower) is the default
	// cap on committed guest memory: the rest is for the host, the tools
	// and everything else on the machine.
	DefaultCommittedMemoryPercent = 50

	// The warm pool (WithPool).

	// DefaultPoolSize is the default number of restored instances kept
	// ready: enough for a burst on a few cores, at about 250 KiB of
	// private memory each.
	DefaultPoolSize = 4
	// MaxPoolSize bounds WithPool: idle instances are charged to the
	// committed memory cap, and more than this would only hold memory.
	MaxPoolSize = 1024

	// The bytecode cache (WithBytecodeCache).

	// DefaultBytecodeEntries programs are kept at most.
	DefaultBytecodeEntries = 1024
	// DefaultBytecodeBytes of bytecode are kept at most (a small program's
	// bytecode is a few KiB).
	DefaultBytecodeBytes = 32 << 20
)

// The environment variables a configuration reads.
const (
	// EngineEnv names the environment variable that sets the engine of
	// NewConfig's configuration when it is not empty (the conformance tests
	// run once per engine with it; WithEngine overrides it).
	EngineEnv = "PTCX_ENGINE"
	// GuestEnv is the environment variable that names the guest module's
	// file (a guest.wasm built by `make guest`) for a build of ptcx that
	// embeds none.
	GuestEnv = "PTCX_GUEST"
)

// WithGuest makes the Runtime run wasm, a guest module built by `make
// guest` (guest/wasm/guest.wasm), instead of the one this build embeds.
// New checks that it is a ptcx guest of this host's ABI version. Default
// (nil): the embedded guest, else the file named by PTCX_GUEST.
func (c Config) WithGuest(wasm []byte) Config {
	c.guest = wasm
	return c
}

// guestModule returns the guest module, metered: the one given by
// WithGuest, else the embedded one, else the file PTCX_GUEST names. The
// embedded guest wins over PTCX_GUEST, so a variable left set in a shell
// cannot shadow a freshly built guest. isEmbedded reports that it is the
// embedded one, which a run starts on its caller's goroutine (run.run).
func (c Config) guestModule() (bin []byte, isEmbedded bool, err error) {
	switch {
	case c.guest != nil:
		bin, err = meterGuest(c.guest)
		return bin, false, err
	case embeddedWasm() != nil:
		bin, err = embedded()
		return bin, true, err
	}
	path := os.Getenv(GuestEnv)
	if path == "" {
		return nil, false, ErrNoGuest
	}
	if bin, err = os.ReadFile(path); err != nil {
		return nil, false, fmt.Errorf("wasmhost: the guest named by %s: %w", GuestEnv, err)
	}
	bin, err = meterGuest(bin)
	return bin, false, err
}

// embeddedWasm is guest.Wasm; tests replace it to act as a build without
// the guest.
var embeddedWasm = guest.Wasm
