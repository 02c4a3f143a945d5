package cards

import "github.com/paygate/gateway/ledger"

// Domain is the card domain as the journal core runs it (ledger.Domain):
// listed by the app after fx and before the network (internal/domains).
var Domain = ledger.Domain{
	Name:             "cards",
	States:           []ledger.StateKind{batchOf},
	Tables:           []string{"cards", "card_issue_daily"},
	RetryConstraints: []string{panFingerprintKey},
	MerchantSetup:    setupMerchant,
}
