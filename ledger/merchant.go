package ledger

import (
	"context"

	"github.com/uptrace/bun"
)

// Merchant is what the journal needs of a merchant, read with its head
// under the batch's lock: its id, its shop number and callback URL (the
// outbox's events and their deliveries), its currencies (the accounts it
// may hold). Everything else about a merchant is internal/merchant's.
type Merchant struct {
	ID          int64
	ShopNo      string
	Currencies  []string
	CallbackURL string
}

// HasCurrency reports whether cur is one of the merchant's currencies.
func (m *Merchant) HasCurrency(cur string) bool {
	for _, c := range m.Currencies {
		if c == cur {
			return true
		}
	}
	return false
}

// OpenJournal starts a new merchant's journal in db, the transaction that
// creates the merchant (internal/merchant): its head, then the domains'
// rows of it (Domain.MerchantSetup), in the order of Config.Domains.
func (l *Ledger) OpenJournal(ctx context.Context, db bun.IDB, m *Merchant) error {
	if _, err := db.NewRaw(`insert into ledger_heads (merchant_id) values (?)`, m.ID).Exec(ctx); err != nil {
		return mapError(err)
	}
	for _, setup := range l.setups {
		if err := setup(ctx, db, m); err != nil {
			return err
		}
	}
	return nil
}
