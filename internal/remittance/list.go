package remittance

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// The console's lists of remittances: a merchant's, page by page, and the
// ones that are stuck. Bounded by the caller's limit.

// ListItem is one remittance in a merchant's list, with its beneficiary's
// name and country (what tells the rows apart for a person) but not the
// rest of the beneficiary or the history (Remittance reads those).
type ListItem struct {
	TxID      string    `bun:"tx_id"`
	PayerID   string    `bun:"payer_id"`
	Amount    int64     `bun:"amount"`
	Fee       int64     `bun:"fee"`
	Currency  string    `bun:"currency"`
	Rail      string    `bun:"rail"`
	Status    string    `bun:"status"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
	// The beneficiary's name and ISO country, as the merchant sent them
	// ("" when the stored beneficiary lacks one).
	BeneficiaryName    string `bun:"beneficiary_name"`
	BeneficiaryCountry string `bun:"beneficiary_country"`
}

// List returns up to limit of merchant's remittances newest first, of one
// status ("" for any), those older than the remittance before ("" from the
// newest): keyset paging on (created_at, tx_id), so a page costs the same
// however deep, and a remittance made meanwhile does not shift the pages.
// A before of another merchant (or unknown) finds no row to start from and
// lists nothing.
func (s *Service) List(ctx context.Context, merchant int64, status, before string, limit int) ([]ListItem, error) {
	var out []ListItem
	err := s.l.DB().NewRaw(`select r.tx_id, r.payer_id, r.amount, r.fee, r.currency, r.rail, r.status, r.created_at, r.updated_at,
		       coalesce(r.beneficiary ->> 'name', '') as beneficiary_name,
		       coalesce(r.beneficiary ->> 'country', '') as beneficiary_country
		from remittances r
		where r.merchant_id = ?0 and (?1 = '' or r.status = ?1)
		  and (?2 = '' or (r.created_at, r.tx_id) < (select b.created_at, b.tx_id from remittances b
		                                             where b.tx_id = ?2 and b.merchant_id = ?0))
		order by r.created_at desc, r.tx_id desc limit ?3`, merchant, status, before, limit).Scan(ctx, &out)
	return out, ledger.MapError(err)
}

// StuckRemittance is a remittance not final long after it was made.
type StuckRemittance struct {
	ShopNo    string    `bun:"-"` // the merchant's, from internal/merchant
	Merchant  int64     `bun:"merchant_id"`
	TxID      string    `bun:"tx_id"`
	Status    string    `bun:"status"`
	CreatedAt time.Time `bun:"created_at"`
}

// Stuck lists, across merchants, up to limit remittances still submitted,
// screening or in flight that were made before before, oldest first.
func (s *Service) Stuck(ctx context.Context, before time.Time, limit int) ([]StuckRemittance, error) {
	var out []StuckRemittance
	err := s.l.DB().NewRaw(`select r.merchant_id, r.tx_id, r.status, r.created_at
		from remittances r
		where r.status in ('SUBMITTED', 'SCREENING', 'IN_FLIGHT') and r.created_at < ?
		order by r.created_at limit ?`, before, limit).Scan(ctx, &out)
	if err != nil || len(out) == 0 {
		return out, ledger.MapError(err)
	}
	// One batch read for the page: the merchants are internal/merchant's.
	err = merchant.NameShops(ctx, s.l.DB(), out, func(r *StuckRemittance) int64 { return r.Merchant },
		func(r *StuckRemittance, shop string) { r.ShopNo = shop })
	return out, err
}

// SanctionsSummary is the loaded sanctions list in brief: its version (0:
// none loaded), its size and its first entries.
type SanctionsSummary struct {
	Version int64
	Entries int64
	Sample  []SanctionsEntry
}

// SanctionsSample summarises the current list with its first n entries
// (by the order they were loaded). Sanctions reads the whole list, which a
// page does not need.
func (s *Service) SanctionsSample(ctx context.Context, n int) (*SanctionsSummary, error) {
	var out SanctionsSummary
	var head []struct {
		Version int64 `bun:"version"`
		Count   int64 `bun:"count"`
	}
	err := s.l.DB().NewRaw(`select version, count(*) as count from sanctions_entries
		where version = (select max(version) from sanctions_entries) group by version`).Scan(ctx, &head)
	if err != nil || len(head) == 0 {
		return &out, ledger.MapError(err)
	}
	out.Version, out.Entries = head[0].Version, head[0].Count
	err = s.l.DB().NewRaw(`select name, coalesce(country, '') as country, coalesce(list, '') as list, coalesce(entry_ref, '') as entry_ref
		from sanctions_entries where version = ? order by id limit ?`, out.Version, n).Scan(ctx, &out.Sample)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return &out, nil
}
