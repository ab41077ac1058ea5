package wasmhost

import (
	"os"
	"path/filepath"
)

// Config configures a Runtime. It is immutable: every With method returns a
// modified copy, so a Config can be shared and specialised freely.
//
// The zero Config is not valid; start from NewConfig.
type Config struct {
	cacheDir      string
	deterministic bool
	seed          int64
	limits        Limits
	guest         []byte // the guest module; nil means guest.Wasm()
	admission     admissionConfig
}

// NewConfig returns the default configuration:
//
//   - the on-disk compilation cache in DefaultCacheDir (compiling the guest
//     takes about half a second; loading it from the cache about 40 ms, and
//     New as a whole 60 to 90 ms on the development VM);
//   - the real clock and crypto/rand as the guest's time and random source;
//   - DefaultLimits as the Runtime's limits;
//   - the default guest slots and admission caps (see WithGuestSlots,
//     WithMaxRuns, WithMaxCommittedMemory and WithAdmissionWait).
func NewConfig() Config {
	return Config{cacheDir: DefaultCacheDir(), limits: DefaultLimits(),
		admission: admissionConfig{wait: DefaultAdmissionWait}}
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
// missing. The empty string turns the on-disk cache off: every New then
// compiles the guest from scratch. Default: DefaultCacheDir().
func (c Config) WithCompilationCacheDir(dir string) Config {
	c.cacheDir = dir
	return c
}

// WithDeterministic makes every run see the same world: a clock that starts
// at 2022-01-01T00:00:00Z and advances 1 ms per reading, and a random source
// seeded with seed, so Math.random and Date repeat exactly from run to run
// (for replay and tests). Timers still wait real time. Default: the real
// clock and crypto/rand.
func (c Config) WithDeterministic(seed int64) Config {
	c.deterministic = true
	c.seed = seed
	return c
}

// WithLimits sets the Runtime's limits: the ceiling of every run's limits.
// Zero fields take their defaults (DefaultLimits). Default: DefaultLimits().
func (c Config) WithLimits(l Limits) Config {
	c.limits = l
	return c
}
