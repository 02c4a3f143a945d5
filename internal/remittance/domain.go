package remittance

import "github.com/paygate/gateway/ledger"

// Domain is the remittance domain as the journal core runs it
// (ledger.Domain), listed by the app after the cards (internal/domains).
var Domain = ledger.Domain{
	Name:   "remittance",
	States: []ledger.StateKind{batchOf},
	Tables: []string{"remittances", "remittance_history"},
}
