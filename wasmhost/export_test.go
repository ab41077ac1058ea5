package wasmhost

// WithGuest replaces the guest module, for tests of what New accepts.
func (c Config) WithGuest(wasm []byte) Config {
	c.guest = wasm
	return c
}

// AbandonedRuns returns how many runs Run has returned without waiting for
// their guest, so far in this process.
func AbandonedRuns() int64 { return abandonedRuns.Load() }
