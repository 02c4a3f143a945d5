package fx

import "github.com/paygate/gateway/ledger"

// Domain is the FX rates as the journal core runs them (ledger.Domain): a
// batch state read once per batch that writes nothing, listed first by the
// app (internal/domains).
var Domain = ledger.Domain{
	Name:   "fx",
	States: []ledger.StateKind{ratesOf},
}
