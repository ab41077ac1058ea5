package serve

// Crash ends s's part in its cluster at once, as if its process were
// killed: no more lease renewals, record writes or answers to other nodes.
func Crash(s *Server) {
	if s.cluster != nil {
		s.cluster.crash()
	}
}

// NodeName is the name s has in its cluster ("" without one).
func NodeName(s *Server) string {
	if s.cluster == nil {
		return ""
	}
	return s.cluster.node
}
