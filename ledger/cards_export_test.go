package ledger

import "context"

// SetPANSource replaces how l draws new cards' PANs (nil: at random).
func SetPANSource(l *Ledger, f func(bin string) string) { l.panSource = f }

// NewPAN draws a PAN at random, as a new card does.
var NewPAN = newPAN

// CreateCardOnDemand creates a card as CreateCard does, except that its
// batch does not prefetch the BIN access and today's issuing counter:
// createCard reads them on demand, which no public path reaches today.
func CreateCardOnDemand(ctx context.Context, l *Ledger, merchant int64, in CreateCardInput) (*Card, error) {
	cmd := createCardCmd(merchant, in)
	cmd.bin = nil
	return submitCard[Card](ctx, l, merchant, nil, in, cmd)
}
