package executor

import "github.com/ptcx/ptcx/internal/resolve"

// A run's nested calls resolve their tool names in the run's scope, and a
// program calls the same few tools over and over: the token keeps the last
// resolution of each (in resolvedSlots slots, by name), valid while the
// registry counts no change since it was made (resolve.Changes, one
// atomic read). An awaited call so spares the registry's lock and its
// lookups; a change to the registry is seen by the next call, as without
// the cache ("changes are seen by executions that resolve after them").

// resolvedSlots is how many resolutions a run keeps: programs alternating
// among more tools than this, or tools whose names share a slot, resolve
// again (and allocate the entry) on a miss.
const resolvedSlots = 4

// resolvedTool is one kept resolution: of name, in the token's scope, for
// a nested call, as the registry was when it counted changes.
type resolvedTool struct {
	changes uint64
	name    string
	res     resolve.Resolution
}

// resolveNested resolves name for a nested call of t's run.
func (t *token) resolveNested(e *Executor, name string) resolve.Resolution {
	changes := e.changes()
	slot := &t.resolved[resolvedSlot(name)]
	if r := slot.Load(); r != nil && r.changes == changes && r.name == name {
		return r.res
	}
	res := e.resolve(t.scope, name, true)
	slot.Store(&resolvedTool{changes: changes, name: name, res: res})
	return res
}

// resolvedSlot is name's slot.
func resolvedSlot(name string) int {
	h := len(name)
	if h > 0 {
		h = h*31 + int(name[0])*7 + int(name[h-1])
	}
	return h % resolvedSlots
}
