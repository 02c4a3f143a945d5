package console

import (
	"net/http"
	"slices"
)

// routeMux is the console's http.ServeMux that also remembers the patterns
// it was given, because a ServeMux cannot list them: a test walks every
// route (csrf_routes_test.go: each state-changing one refuses a request
// without the CSRF token), and a route added later is in that walk without
// anyone editing the test.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func newRouteMux() *routeMux { return &routeMux{ServeMux: http.NewServeMux()} }

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// Patterns lists every registered pattern, in registration order.
func (m *routeMux) Patterns() []string { return slices.Clone(m.patterns) }
