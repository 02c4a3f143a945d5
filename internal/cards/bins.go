package cards

import (
	"context"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// BIN is one entry of the BIN catalogue.
type BIN struct {
	Bin      string `json:"bin"`
	Currency string `json:"currency"`
	Network  string `json:"network"` // VISA or MASTERCARD
	Type     string `json:"type"`    // VIRTUAL
	Enabled  bool   `json:"enabled"`
}

// binKey is a merchant's BIN entry (a BIN in a currency).
type binKey struct {
	merchant      int64
	bin, currency string
}

// binOpen says whether merchant m may use BIN entry b: enabled, and either
// opened to it explicitly (its merchant_bins row mb) or, with no override,
// in one of its currencies.
const binOpen = `b.enabled and coalesce(mb.allowed, b.currency = any(m.currencies))`

// binAccessSelect lists BIN entries with whether merchant ? may use them.
var binAccessSelect = `
	select b.bin, b.currency, b.network, b.type, b.enabled, ` + binOpen + ` as open
	from bins b
	cross join ` + merchant.Probe(merchant.ProbeCurrencies, "?") + ` m
	left join merchant_bins mb on mb.merchant_id = m.id and mb.bin = b.bin and mb.currency = b.currency`

type binAccessRow struct {
	Bin      string `bun:"bin"`
	Currency string `bun:"currency"`
	Network  string `bun:"network"`
	Type     string `bun:"type"`
	Enabled  bool   `bun:"enabled"`
	Open     bool   `bun:"open"`
}

func (r *binAccessRow) toBIN() BIN {
	return BIN{Bin: r.Bin, Currency: r.Currency, Network: r.Network, Type: r.Type, Enabled: r.Enabled}
}

// MerchantBINs returns the BIN entries open to the merchant, ordered by
// network, BIN and currency.
func (s *Service) MerchantBINs(ctx context.Context, merchant int64) ([]BIN, error) {
	var rows []binAccessRow
	err := s.l.DB().NewRaw(`select * from (`+binAccessSelect+`) x where x.open order by x.network, x.bin, x.currency`, merchant).
		Scan(ctx, &rows)
	if err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]BIN, len(rows))
	for i := range rows {
		out[i] = rows[i].toBIN()
	}
	return out, nil
}

// stmtLoadBins reads the access of merchants to BIN entries, for binFor.
// Each row is a primary-key probe whatever the statistics (see
// ledger's stmtLoadAccounts).
var stmtLoadBins = ledger.NewStmt(`
	select v.m, b.bin, b.currency, b.network, b.type, b.enabled, ` + binOpen + ` as open
	from unnest($1::bigint[], $2::text[], $3::text[]) as v(m, bin, cur)
	cross join lateral (select * from bins b where b.bin = v.bin and b.currency = v.cur offset 0) b
	cross join lateral ` + merchant.Probe(merchant.ProbeCurrencies, "v.m") + ` m
	left join lateral (select * from merchant_bins mb
	                   where mb.merchant_id = v.m and mb.bin = v.bin and mb.currency = v.cur offset 0) mb on true`)

// queueBins queues, for card creations, the reads binFor and issuedToday
// would otherwise make one round trip each: the BIN entries' access and
// the merchants' issuing counters of today.
func (b *batch) queueBins(tx *ledger.Tx, p *ledger.Pipeline, keys []binKey) {
	d := day(tx)
	issues := make([]issueKey, len(keys))
	for i, k := range keys {
		issues[i] = issueKey{k.merchant, k.currency, d}
	}
	b.queueBinAccess(p, keys)
	b.queueIssued(tx, p, issues)
}

// queueBinAccess queues the read of BIN entries' access that the batch
// does not know yet. An entry the read does not return is recorded as
// absent (nil): binFor refuses it.
func (b *batch) queueBinAccess(p *ledger.Pipeline, keys []binKey) {
	var want []binKey
	var ms []int64
	var bins, curs []string
	for _, k := range keys {
		if _, ok := b.bins[k]; !ok && !slices.Contains(want, k) {
			want = append(want, k)
			ms, bins, curs = append(ms, k.merchant), append(bins, k.bin), append(curs, k.currency)
		}
	}
	if len(want) == 0 {
		return
	}
	p.Query(stmtLoadBins, func(rows pgx.Rows) error {
		for rows.Next() {
			var m int64
			var r binAccessRow
			if err := rows.Scan(&m, &r.Bin, &r.Currency, &r.Network, &r.Type, &r.Enabled, &r.Open); err != nil {
				return err
			}
			b.bins[binKey{merchant: m, bin: r.Bin, currency: r.Currency}] = &r
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range want {
			if _, ok := b.bins[k]; !ok {
				b.bins[k] = nil
			}
		}
		return nil
	}, ms, bins, curs)
}

// binFor returns the BIN entry (bin, currency) if it is open to m, else
// EFORBIDDEN "bin".
func (b *batch) binFor(tx *ledger.Tx, m *ledger.Merchant, bin, currency string) (*BIN, error) {
	k := binKey{merchant: m.ID, bin: bin, currency: currency}
	if _, ok := b.bins[k]; !ok {
		p := tx.Pipeline()
		b.queueBinAccess(p, []binKey{k})
		if err := p.Send(); err != nil {
			return nil, err
		}
	}
	row := b.bins[k]
	if row == nil || !row.Open {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonBIN, "BIN %s in %s is not open to this merchant", bin, currency)
	}
	out := row.toBIN()
	return &out, nil
}

// Card networks of the BIN catalogue.
var binNetworks = map[string]bool{"VISA": true, "MASTERCARD": true}

// UpsertBIN adds a BIN entry to the catalogue or changes its network and
// whether it is enabled.
func (s *Service) UpsertBIN(ctx context.Context, b BIN) error {
	if len(b.Bin) < 6 || len(b.Bin) > 8 || strings.Trim(b.Bin, "0123456789") != "" {
		return postings.FieldErrorf("bin", "must be 6 to 8 digits")
	}
	if _, err := postings.LookupCurrency(b.Currency); err != nil {
		return err
	}
	if !binNetworks[b.Network] {
		return postings.FieldErrorf("network", "must be VISA or MASTERCARD")
	}
	_, err := s.l.DB().NewRaw(`
		insert into bins (bin, currency, network, enabled) values (?, ?, ?, ?)
		on conflict (bin, currency) do update set network = excluded.network, enabled = excluded.enabled`,
		b.Bin, b.Currency, b.Network, b.Enabled).Exec(ctx)
	return ledger.MapError(err)
}

// BINs lists the whole catalogue.
func (s *Service) BINs(ctx context.Context) ([]BIN, error) {
	var out []BIN
	err := s.l.DB().NewRaw(`select bin, currency, network, type, enabled from bins order by network, bin, currency`).
		Scan(ctx, &out)
	return out, ledger.MapError(err)
}

// SetBINAccess opens (allowed true) or closes (false) a BIN entry for one
// merchant; nil removes the override, back to the default rule (the enabled
// BINs in the merchant's currencies).
func (s *Service) SetBINAccess(ctx context.Context, merchant int64, bin, currency string, allowed *bool) error {
	if allowed == nil {
		_, err := s.l.DB().NewRaw(`delete from merchant_bins where merchant_id = ? and bin = ? and currency = ?`,
			merchant, bin, currency).Exec(ctx)
		return ledger.MapError(err)
	}
	_, err := s.l.DB().NewRaw(`
		insert into merchant_bins (merchant_id, bin, currency, allowed) values (?, ?, ?, ?)
		on conflict (merchant_id, bin, currency) do update set allowed = excluded.allowed`,
		merchant, bin, currency, *allowed).Exec(ctx)
	return ledger.MapError(err)
}
