package cells_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/cells"
)

// A write to every cell reports each cell's result; one that fails in
// some cells names the cells done and not (and is partial); one that
// fails everywhere is the cells' own error, nothing written.
func TestEach(t *testing.T) {
	t.Parallel()
	refused := errors.New("refused")
	for _, tc := range []struct {
		name    string
		failIn  map[string]bool
		done    int
		errHas  string
		partial bool
	}{
		{"every cell", nil, 3, "", false},
		{"one cell down", map[string]bool{"b2": true}, 2, "written in cells a1, c3; NOT in b2 (refused)", true},
		{"every cell refuses", map[string]bool{"a1": true, "b2": true, "c3": true}, 0, "refused", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := cells.Each([]string{"a1", "b2", "c3"}, func(name string) (any, error) {
				if tc.failIn[name] {
					return nil, refused
				}
				return name + "!", nil
			})
			var pe *cells.PartialError
			if len(out) != tc.done || (tc.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.errHas)) ||
				errors.As(err, &pe) != tc.partial {
				t.Errorf("Each: %v, %v; want %d results and an error with %q (partial %v)", out, err, tc.done, tc.errHas, tc.partial)
			}
		})
	}
}
