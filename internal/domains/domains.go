// Package domains is the one list of the domains the journal core runs, in
// the order it runs them: their batch states flush in this order, so a
// domain comes after every domain whose tables its own reference (cards
// before the authorizations and remittances that name a card). The app,
// the operator's commands, the tools and the tests' gateway all pass it to
// ledger.New; TestFlushOrderFollowsTheForeignKeys holds it to the schema.
package domains

import (
	"github.com/paygate/gateway/internal/adjustment"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/deposit"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
)

// All returns the gateway's domains in flush order.
func All() []ledger.Domain {
	return []ledger.Domain{fx.Domain, cards.Domain, network.Domain, remittance.Domain, deposit.Domain, adjustment.Domain}
}
