package wasmhost

// WithGuest replaces the guest module, for tests of what New accepts.
func (c Config) WithGuest(wasm []byte) Config {
	c.guest = wasm
	return c
}
