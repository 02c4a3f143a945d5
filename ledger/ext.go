package ledger

// extState holds the rows of the merchants' domain tables that a batch reads
// and writes beside the journal. Each domain adds its part here, with its
// load, flush and undo; the core of the writer does not change.
type extState struct{}

type extMark struct{}

type extPrefetch struct{}

func (e *extState) mark() extMark                        { return extMark{} }
func (e *extState) rollback(extMark)                     {}
func (e *extState) load(st *state, p *extPrefetch) error { return nil }
func (e *extState) flush(st *state) error                { return nil }
func (e *extState) events() int                          { return 0 }
