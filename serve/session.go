package serve

import (
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/workspace"
)

// DefaultMaxSessions is how many sessions' workspaces a tenant keeps open
// at once; the least recently used idle one is closed to make room.
const DefaultMaxSessions = 256

var sessionName = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// sessions are a tenant's per-session workspaces: the same directory, each
// with its own read-before-write state, so that one session's reads never
// let another session's writes through. Entries in use are never closed.
type sessions struct {
	mu   sync.Mutex
	root string
	max  int
	open map[string]*session
}

type session struct {
	ws   *workspace.Workspace
	refs int
	used time.Time
}

// acquire returns the session's workspace, opening it if needed; release
// it when the execution settles.
func (ss *sessions) acquire(name string) (*workspace.Workspace, func(), *httpError) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.open[name]
	if !ok {
		if len(ss.open) >= ss.max && !ss.evictLocked() {
			return nil, nil, quotaError(ReasonMaxSessions, "%d sessions are in use at once, the maximum per tenant; retry once one settles", ss.max)
		}
		ws, err := workspace.New(ss.root, workspace.Options{})
		if err != nil {
			return nil, nil, errorf(string(api.CodeInternal), "opening the session's workspace: %v", err)
		}
		s = &session{ws: ws}
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

// evictLocked closes the least recently used idle session.
func (ss *sessions) evictLocked() bool {
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

func (ss *sessions) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for name, s := range ss.open {
		_ = s.ws.Close()
		delete(ss.open, name)
	}
}

func checkSession(name string) error {
	if !sessionName.MatchString(name) {
		return fmt.Errorf("%q must match %s", name, sessionName)
	}
	return nil
}
