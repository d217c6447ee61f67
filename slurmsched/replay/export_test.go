package replay

// Adopt makes id one of s's jobs, as if its Submit had returned it.
func Adopt(s *Server, id string) {
	if s.mine == nil {
		s.mine = map[string]bool{}
	}
	s.mine[id] = true
}
