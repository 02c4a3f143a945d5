package console

// RoutePatterns lists the console's routes as registered (routemux.go), for
// the tests that walk every route.
func RoutePatterns(s *Server) []string { return s.mux.Patterns() }
