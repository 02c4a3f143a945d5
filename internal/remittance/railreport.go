package remittance

import (
	"context"
	"time"

	"github.com/paygate/gateway/ledger"
)

// The rail's settlement report is reconciled (package reconcile, "gateway
// reconcile rail") against the journal's REMIT_SETTLE and REMIT_RETURN
// entries; these reads give it each such entry with its remittance's fee,
// status and merchant. A remittance rejected by screening never reached
// the rail: its REMIT_RETURN is not the rail's and is left out.

// RailEntry is a REMIT_SETTLE or REMIT_RETURN entry of a remittance the
// rail carried.
type RailEntry struct {
	TxID      string    `bun:"tx_id"`
	Found     bool      `bun:"found"`  // the remittance has such an entry; the fields below are set only then
	Status    string    `bun:"status"` // the remittance's status; "" when there is no such remittance
	EntryID   int64     `bun:"entry_id"`
	Merchant  int64     `bun:"merchant_id"`
	Seq       int64     `bun:"merchant_seq"`
	Kind      string    `bun:"kind"`
	Amount    int64     `bun:"amount"` // the posting's, minor units of Currency
	Fee       int64     `bun:"fee"`
	Currency  string    `bun:"currency"`
	CreatedAt time.Time `bun:"created_at"`
}

const railEntryColumns = `r.status, e.id as entry_id, e.merchant_id, e.merchant_seq, e.kind, p.amount, r.fee, p.currency, e.created_at
	from remittances r
	join entries e on e.merchant_id = r.merchant_id and e.tx_id = r.tx_id and e.kind in ('REMIT_SETTLE', 'REMIT_RETURN')
	join postings p on p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq and p.idx = 0
	where r.status in ('SETTLED', 'RETURNED')`

// RailEntriesByTx returns, for each tx id (in order), its entry if the
// rail carried the remittance to an end.
func (s *Service) RailEntriesByTx(ctx context.Context, txIDs []string) ([]RailEntry, error) {
	out := []RailEntry{}
	if len(txIDs) == 0 {
		return out, nil
	}
	err := s.l.DB().NewRaw(`select u.tx_id, x.entry_id is not null as found, coalesce(rr.status, '') as status,
			coalesce(x.entry_id, 0) as entry_id, coalesce(x.merchant_id, 0) as merchant_id, coalesce(x.merchant_seq, 0) as merchant_seq,
			coalesce(x.kind, '') as kind, coalesce(x.amount, 0) as amount, coalesce(x.fee, 0) as fee,
			coalesce(x.currency, '') as currency, coalesce(x.created_at, 'epoch') as created_at
		from unnest(?::text[]) with ordinality as u(tx_id, n)
		left join remittances rr on rr.tx_id = u.tx_id
		left join lateral (select `+railEntryColumns+` and r.tx_id = u.tx_id limit 1) x on true
		order by u.n`, textArray(txIDs)).Scan(ctx, &out)
	return out, ledger.MapError(err)
}

// RailEntriesBetween pages through the entries created in [from, to), in
// (CreatedAt, EntryID) order after the cursor, at most limit.
func (s *Service) RailEntriesBetween(ctx context.Context, from, to, afterAt time.Time, afterID int64, limit int) ([]RailEntry, error) {
	out := []RailEntry{}
	err := s.l.DB().NewRaw(`select r.tx_id, true as found, `+railEntryColumns+`
		and e.created_at >= ? and e.created_at < ? and (e.created_at, e.id) > (?, ?)
		order by e.created_at, e.id limit ?`, from.UTC(), to.UTC(), afterAt.UTC(), afterID, limit).Scan(ctx, &out)
	for i := range out {
		out[i].CreatedAt = out[i].CreatedAt.UTC()
	}
	return out, ledger.MapError(err)
}

// textArray writes ids as a PostgreSQL array literal. A caller passes only
// reference text ([A-Za-z0-9_.:-]): nothing to quote.
func textArray(ids []string) string {
	b := []byte{'{'}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, id...)
	}
	return string(append(b, '}'))
}
