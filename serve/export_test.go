package serve

// Routes returns the method and path of every route s serves.
func Routes(s *Server) [][2]string {
	var out [][2]string
	for _, r := range s.routeTable() {
		out = append(out, [2]string{r.method, r.path})
	}
	return out
}
