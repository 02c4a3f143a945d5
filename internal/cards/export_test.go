package cards

import (
	"context"

	"github.com/paygate/gateway/ledger"
)

// SetPANSource replaces how s draws new cards' PANs (nil: at random).
func SetPANSource(s *Service, f func(bin string) string) { s.panSource = f }

// NewPAN draws a PAN at random, as a new card does.
var NewPAN = newPAN

// CreateCardOnDemand creates a card as CreateCard does, except that its
// batch does not prefetch the BIN access and today's issuing counter:
// createCard reads them on demand, which no public path reaches today.
func CreateCardOnDemand(ctx context.Context, s *Service, merchant int64, in CreateCardInput) (*Card, error) {
	return ledger.Do(ctx, s.l, nil, in, s.createCmd(merchant, in, false))
}

// CardListSQL are the statements of ListCards: the total, then the page.
var CardListSQL = []string{stmtCountCards.SQL(), stmtListCards.SQL()}

// SetBeforeOwnerLookup calls f with the size of each card → merchant
// lookup before its statement runs.
func SetBeforeOwnerLookup(s *Service, f func(n int)) { s.owners.beforeLookup = f }

// OwnerLookupsQueued counts the misses waiting for a lookup.
func OwnerLookupsQueued(s *Service) int {
	s.owners.qmu.Lock()
	defer s.owners.qmu.Unlock()
	return len(s.owners.queue)
}

// CellPAN draws a PAN as cell number does for a new card on bin.
var CellPAN = cellPAN
