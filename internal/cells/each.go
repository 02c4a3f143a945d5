package cells

import (
	"fmt"
	"strings"
)

// Each runs fn for every cell of names in turn, each on its own (its own
// transaction in its own database): how the operator's data (BINs, FX
// rates, the sanctions list) reaches every cell (docs/scaling.md). A
// two-phase commit over cells would be a home-made distributed
// transaction for writes that are safe to repeat; instead a failure
// part-way is a *PartialError naming the cells done and the cells not,
// and running the same command again brings them level. It returns each
// done cell's result by name.
func Each(names []string, fn func(name string) (any, error)) (map[string]any, error) {
	out := map[string]any{}
	pe := &PartialError{}
	var first error
	for _, n := range names {
		r, err := fn(n)
		if err != nil {
			pe.Failed = append(pe.Failed, fmt.Sprintf("%s (%v)", n, err))
			if first == nil {
				first = err
			}
			continue
		}
		out[n] = r
		pe.Done = append(pe.Done, n)
	}
	switch {
	case len(pe.Failed) == 0:
		return out, nil
	case len(pe.Done) == 0:
		return out, first // nothing written anywhere: the error as one cell gives it
	}
	return out, pe
}

// PartialError is a write that reached some cells and not others.
type PartialError struct {
	Done, Failed []string
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("written in cells %s; NOT in %s: run the same command again to bring every cell level",
		strings.Join(e.Done, ", "), strings.Join(e.Failed, "; "))
}
