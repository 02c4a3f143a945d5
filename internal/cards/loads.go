package cards

import (
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The daily card-load limit (docs/cards.md, "Limits and KYB tiers"): what a
// merchant may move from its own money onto its cards in one UTC day, per
// currency. It is counted where money moves, on every posting of every
// entry, not in the commands that move it: a card created empty and topped
// up, a cross-currency top-up, a top-up that repays what a card owes, an
// entry appended by the ledger's own Append, or a path added later all
// count the same, and none can go around it. The batch state checks every
// entry the batch posts (ledger.PostChecker).

// isCardLoad reports whether p moves the merchant's money onto a card: from
// its funding account, or from the FX position that a conversion from its
// funding account feeds, to any account of a card. The card network's
// money (refunds, released holds) and moves between a card's own accounts
// are not loads.
func isCardLoad(p *postings.Posting) bool {
	return (p.Source.Type == postings.AccountFunding || p.Source.Type == postings.AccountFXPosition) &&
		p.Destination.Type.PerCard()
}

// CheckPost implements ledger.PostChecker: it adds the card loads of e to
// the day's counter of their currency, refusing the entry (ELIMIT
// daily_card_issue) when the counter would exceed the merchant's limit. The
// counter changes with an undo, so a refused or rolled-back entry leaves it
// as it was.
func (b *batch) CheckPost(tx *ledger.Tx, m *ledger.Merchant, e *postings.Entry) error {
	for i := range e.Postings {
		p := &e.Postings[i]
		if !isCardLoad(p) {
			continue
		}
		load := p.Amount
		// The other loads of the entry in the same currency, counted once.
		seen := false
		for j := range e.Postings[:i] {
			if q := &e.Postings[j]; isCardLoad(q) && q.Currency == p.Currency {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		for j := i + 1; j < len(e.Postings); j++ {
			if q := &e.Postings[j]; isCardLoad(q) && q.Currency == p.Currency {
				load += q.Amount
			}
		}
		if err := b.chargeCardLoad(tx, m, p.Currency, load); err != nil {
			return err
		}
	}
	return nil
}

func (b *batch) chargeCardLoad(tx *ledger.Tx, m *ledger.Merchant, currency string, load int64) error {
	lim, err := b.limit(tx, m, currency)
	if err != nil {
		return err
	}
	loaded, err := b.issuedToday(tx, m.ID, currency)
	if err != nil {
		return err
	}
	if total, ok := postings.AddChecked(loaded.issued, load); !ok || total > lim.DailyCardIssueMax {
		cur := postings.MustCurrency(currency)
		return postings.ReasonErrorf(postings.ELIMIT, postings.ReasonDailyCardIssue,
			"the daily card-load limit of %s %s would be exceeded (%s %s loaded today)",
			postings.FormatMinor(lim.DailyCardIssueMax, cur), cur.Code, postings.FormatMinor(loaded.issued, cur), cur.Code)
	}
	saved, savedDirty := loaded.issued, loaded.dirty
	tx.Undo(func() { loaded.issued, loaded.dirty = saved, savedDirty })
	loaded.issued += load
	loaded.dirty = true
	return nil
}

// stmtLoadIssued reads issuing counters, for issuedToday: one correlated
// primary-key probe per merchant and currency.
var stmtLoadIssued = ledger.NewStmt(`
	select v.m, v.cur,
	       coalesce((select d.issued from card_issue_daily d
	                 where d.merchant_id = v.m and d.currency = v.cur and d.day = $3::date), 0)
	from unnest($1::bigint[], $2::text[]) as v(m, cur)`)

// queueIssued queues the read of issuing counters that the batch does not
// know yet (all of one day, the batch's); a missing row is zero.
func (b *batch) queueIssued(tx *ledger.Tx, p *ledger.Pipeline, keys []issueKey) {
	var want []issueKey
	var ms []int64
	var curs []string
	for _, k := range keys {
		if _, ok := b.issued[k]; !ok && !slices.Contains(want, k) {
			want = append(want, k)
			ms, curs = append(ms, k.merchant), append(curs, k.currency)
		}
	}
	if len(want) == 0 {
		return
	}
	d := day(tx)
	p.Query(stmtLoadIssued, func(rows pgx.Rows) error {
		for rows.Next() {
			var m, issued int64
			var cur string
			if err := rows.Scan(&m, &cur, &issued); err != nil {
				return err
			}
			b.issued[issueKey{m, cur, d}] = &issueState{issued: issued}
		}
		return rows.Err()
	}, ms, curs, d)
}

// issuedToday returns the day's card-issuing counter of a merchant and
// currency, loading it on first use.
//
// A command that did not name its counter before the batch began (an
// Append of card loads, a conversion's other currency) finds it missing
// here. The read then takes, in the same statement, the counters of every
// merchant of the batch in each of its currencies that the batch has not
// read yet: a batch of sixteen merchants' such loads costs one round trip,
// not sixteen (docs/performance.md, "One merchant against sixteen").
func (b *batch) issuedToday(tx *ledger.Tx, merchant int64, currency string) (*issueState, error) {
	k := issueKey{merchant, currency, day(tx)}
	if _, ok := b.issued[k]; !ok {
		keys := []issueKey{k}
		for _, m := range b.merchants {
			mm, err := tx.Merchant(m)
			if err != nil {
				continue // no head: its commands fail alone
			}
			for _, cur := range mm.Currencies {
				keys = append(keys, issueKey{m, cur, k.day})
			}
		}
		p := tx.Pipeline()
		b.queueIssued(tx, p, keys)
		if err := p.Send(); err != nil {
			return nil, err
		}
	}
	return b.issued[k], nil
}

var stmtUpsertIssued = ledger.NewStmt(`
	insert into card_issue_daily (merchant_id, currency, day, issued)
	select * from unnest($1::bigint[], $2::text[], $3::date[], $4::bigint[])
	on conflict (merchant_id, currency, day) do update set issued = excluded.issued`)

func (b *batch) flushIssued(p *ledger.Pipeline) {
	var ms, amounts []int64
	var curs, days []string
	for k, s := range b.issued {
		if s.dirty {
			ms, curs, days, amounts = append(ms, k.merchant), append(curs, k.currency), append(days, k.day), append(amounts, s.issued)
		}
	}
	if len(ms) > 0 {
		p.ExecRows(stmtUpsertIssued, len(ms), "issuing counters", ms, curs, days, amounts)
	}
}
