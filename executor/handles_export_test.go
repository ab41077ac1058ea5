package executor

// SetHandleBounds lowers the bounds of one execution's handles (handles.go)
// for a test; the returned function restores them.
func SetHandleBounds(count, bytes int) func() {
	c, b := maxHandles, maxHandleBytes
	maxHandles, maxHandleBytes = count, bytes
	return func() { maxHandles, maxHandleBytes = c, b }
}

// Substitute exposes the decoding of handle markers in arguments to the
// fuzz target, against a table holding one handle whose ref is ref.
func Substitute(ref string, args []byte) (real []byte, failure string) {
	t := &handleTable{holder: "execution", byRef: map[string]*heldHandle{ref: {ref: ref}}}
	t.byRef[ref].Value = []byte(`"v"`)
	r, _, failure := t.substitute(args)
	return r, failure
}

// Placeholders exposes placeholders to the fuzz target, as Substitute.
func Placeholders(ref string, result []byte) []byte {
	t := &handleTable{holder: "execution", byRef: map[string]*heldHandle{ref: {ref: ref}}}
	t.byRef[ref].Value = []byte(`"v"`)
	r, _ := t.placeholders(result)
	return r
}

// ParkedHandle is a handle as parked bytes carry it.
type ParkedHandle = parkedHandle

// ParkedHandleForTest makes one parked handle.
func ParkedHandleForTest(ref, id, value string) []ParkedHandle {
	return []ParkedHandle{{Ref: ref, ID: id, Tool: "doc", Value: []byte(value)}}
}

// CheckParkedHandles exposes the check of restored handles.
func CheckParkedHandles(hs []ParkedHandle) error { return checkParkedHandles(hs, "execution") }

// CheckSessionHandles exposes the check of a session's restored handles.
func CheckSessionHandles(hs []ParkedHandle) error { return checkParkedHandles(hs, "session") }

// SessionHandles returns how many handles session name of scope (empty:
// the deployment) holds, taking its turn; -1 when e has no such session.
func SessionHandles(e *Executor, scope, name string) int {
	if scope == "" {
		scope = deploymentScope
	}
	e.sessions.mu.Lock()
	s := e.sessions.scopes[scope][name]
	e.sessions.mu.Unlock()
	if s == nil {
		return -1
	}
	s.turn <- struct{}{}
	defer func() { <-s.turn }()
	if s.handles == nil {
		return 0
	}
	s.handles.mu.Lock()
	defer s.handles.mu.Unlock()
	return len(s.handles.byRef)
}
