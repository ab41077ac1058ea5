package serve

// MaxHeldSessions is how many sessions a tenant's main executor holds
// between programs.
const MaxHeldSessions = maxHeldSessions

// SessionTurns reports how many sessions s keeps a local turn for.
func SessionTurns(s *Server) int {
	s.states.mu.Lock()
	defer s.states.mu.Unlock()
	return len(s.states.turns)
}

// HeldSessions reports how many sessions tenant's main executor of s
// holds between programs, and how many its executor lists.
func HeldSessions(s *Server, tenant string) (held, listed int) {
	t := s.tenantNamed(tenant)
	s.states.mu.Lock()
	for _, h := range s.states.held {
		if h.t == t {
			held++
		}
	}
	s.states.mu.Unlock()
	return held, len(t.exec.Sessions(""))
}
