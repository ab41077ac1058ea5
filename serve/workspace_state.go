package serve

import (
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/workspace"
)

// DefaultMaxSessions is how many workspace states a tenant keeps open at
// once (the name is older than the workspace_state request member: it
// counts workspace states, not program-state sessions); the least recently
// used idle one is closed to make room. Past it, with every one in use, 429
// max_sessions.
const DefaultMaxSessions = 256

// sessionName is the form of a session's and of a workspace state's name.
var sessionName = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// workspaceStates are a tenant's named workspace states (an execution's
// workspace_state, or its session: ExecutionRequest.workspaceState): the
// same directory, each with its own read-before-write state, so that the
// reads made under one name never let the writes made under another
// through. Entries in use are never closed.
type workspaceStates struct {
	mu   sync.Mutex
	root string
	max  int
	open map[string]*workspaceStateEntry
}

type workspaceStateEntry struct {
	ws   *workspace.Workspace
	refs int
	used time.Time
}

// acquire returns the workspace of the state of that name, opening it if
// needed; release it when the execution settles.
func (ss *workspaceStates) acquire(name string) (*workspace.Workspace, func(), *httpError) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.open[name]
	if !ok {
		if len(ss.open) >= ss.max && !ss.evictLocked() {
			return nil, nil, quotaError(ReasonMaxSessions, "%d workspace states (workspace_state, or session) are in use at once, the maximum per tenant; retry once one settles", ss.max)
		}
		ws, err := workspace.New(ss.root, workspace.Options{})
		if err != nil {
			return nil, nil, errorf(string(api.CodeInternal), "opening the workspace state's workspace: %v", err)
		}
		s = &workspaceStateEntry{ws: ws}
		ss.open[name] = s
	}
	s.refs++
	s.used = time.Now()
	var once sync.Once
	return s.ws, func() {
		once.Do(func() {
			ss.mu.Lock()
			defer ss.mu.Unlock()
			s.refs--
			s.used = time.Now()
		})
	}, nil
}

// evictLocked closes the least recently used idle workspace state.
func (ss *workspaceStates) evictLocked() bool {
	var oldest string
	for name, s := range ss.open {
		if s.refs == 0 && (oldest == "" || s.used.Before(ss.open[oldest].used)) {
			oldest = name
		}
	}
	if oldest == "" {
		return false
	}
	_ = ss.open[oldest].ws.Close()
	delete(ss.open, oldest)
	return true
}

func (ss *workspaceStates) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for name, s := range ss.open {
		_ = s.ws.Close()
		delete(ss.open, name)
	}
}

// checkSession checks a session's or a workspace state's name.
func checkSession(name string) error {
	if !sessionName.MatchString(name) {
		return fmt.Errorf("%q must match %s", name, sessionName)
	}
	return nil
}
