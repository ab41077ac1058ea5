package wasmhost

// SetPoolHot sets how many recycled instances rt's pool keeps hot
// (pool.hot), for tests of cooled instances.
func SetPoolHot(rt *Runtime, n int) {
	rt.pool.mu.Lock()
	rt.pool.hot = n
	rt.pool.mu.Unlock()
}
