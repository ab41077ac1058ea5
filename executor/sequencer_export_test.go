package executor

// SetSequencerHook installs f to run as each scheduler's sequencer
// goroutine starts; the returned function removes it.
func SetSequencerHook(f func()) func() {
	testHookSequencer = f
	return func() { testHookSequencer = nil }
}
