package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The economic facts of issue 30 point 2 (docs/audit.md, "Economic
// facts"): an entry with facts (encoded GWE2) records the rate of its
// conversion with the rate version it came from, and the rule of its fee.
// The stream re-derives each such entry's amounts from its facts with
// postings' one rounding home, and checks the rate version against the
// auditor's view of the rates; a query checks every authorization against
// the entries that name it.
const (
	CheckFacts       = postings.FactCheckFacts // a fact is missing or unreadable
	CheckFXAmount    = postings.FactCheckFX    // the converted amount is not the recorded rate's
	CheckFeeAmount   = postings.FactCheckFee   // the fee is not its rule's
	CheckRateVersion = "rate_version"          // the rate version named is not the rate recorded
	CheckHoldAuth    = "hold_auth"             // an authorization and the entries naming it disagree
)

// rateVersion is one row of audit_fx_rates.
type rateVersion struct {
	base, quote string
	mid         postings.Rate
	spreadBps   int64
	setAt       time.Time
}

// rateVersions are every rate version, by version: few (one per rate an
// operator ever set), read once before the stream.
type rateVersions map[int64]rateVersion

// loadRateVersionsSQL reads the auditor's view of the rates, as an auditor
// would check them.
const loadRateVersionsSQL = `select version, base, quote, mid_rate::text, spread_bps, set_at from audit_fx_rates`

func (rv *rateVersions) load(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, loadRateVersionsSQL)
	if err != nil {
		return ledger.MapError(err)
	}
	defer rows.Close()
	m := rateVersions{}
	for rows.Next() {
		var v int64
		var r rateVersion
		var mid string
		var spread int32
		if err := rows.Scan(&v, &r.base, &r.quote, &mid, &spread, &r.setAt); err != nil {
			return ledger.MapError(err)
		}
		// A stored rate that does not parse cannot match any entry's:
		// the zero Rate makes each entry naming it a rate_version break.
		r.mid, _ = postings.ParseRate(mid)
		r.spreadBps, r.setAt = int64(spread), r.setAt.UTC()
		m[v] = r
	}
	*rv = m
	return ledger.MapError(rows.Err())
}

// checkFacts re-derives the facts of the entry being assembled.
func (s *chainStream) checkFacts() {
	r := &s.rec
	for _, b := range r.CheckFacts() {
		s.problems.add(Problem{Check: b.Check, Merchant: r.Merchant, Seq: r.Seq, Detail: b.Detail})
	}
	fx, ok, err := r.FX()
	if !ok || err != nil {
		return // nothing to look up, or already reported as facts
	}
	if detail := s.rates.differ(fx); detail != "" {
		s.problems.add(Problem{Check: CheckRateVersion, Merchant: r.Merchant, Seq: r.Seq, Detail: detail})
	}
}

// differ says how the rate version fx names differs from the one stored,
// or "" when it is the same: pair, mid rate, time, and the spread when one
// was applied (an authorization converts at the mid rate and applies none).
func (rv rateVersions) differ(fx postings.FXFact) string {
	v, ok := rv[fx.RateVersion]
	switch {
	case !ok:
		return fmt.Sprintf("the entry names rate version %d, which the rates do not have", fx.RateVersion)
	case v.base != fx.From.Code || v.quote != fx.To.Code:
		return fmt.Sprintf("rate version %d is %s/%s, the entry converted %s/%s", fx.RateVersion, v.base, v.quote, fx.From.Code, fx.To.Code)
	case v.mid.IsZero() || v.mid.String() != fx.Mid.String():
		return fmt.Sprintf("rate version %d has mid rate %s, the entry used %s", fx.RateVersion, v.mid, fx.Mid)
	case !v.setAt.Equal(fx.RateAt):
		return fmt.Sprintf("rate version %d was set at %s, the entry says %s", fx.RateVersion,
			v.setAt.Format(postings.FactTimeLayout), fx.RateAt.Format(postings.FactTimeLayout))
	case fx.SpreadBps != 0 && fx.SpreadBps != v.spreadBps:
		return fmt.Sprintf("rate version %d has a spread of %d bps, the entry applied %d", fx.RateVersion, v.spreadBps, fx.SpreadBps)
	}
	return ""
}

// holdAuthCheck checks every authorization against the entries that name
// it (entries_auth_id_idx), through the auditor's view: exactly one
// CARD_AUTH, of the authorization's merchant and card, holding what it
// approved (amount plus fee) with the same transaction amount, currency
// and rate in its facts; and what all its entries moved into and out of
// the card's held account is what it still holds. A hold, capture,
// reversal or expiry that names the wrong authorization leaves one of the
// two with a wrong sum, or two CARD_AUTHs and none. Each card probes its
// held account and its authorizations (authorizations_card_idx), each
// authorization its entries and their postings: a fixed plan, a few rows
// per authorization, and one merchant's cards through cards' index.
var holdAuthCheck = sqlCheck{name: "hold authorizations", check: CheckHoldAuth, cost: 40, sql: `
	select a.merchant_id, coalesce(h.address, ''), x.detail
	from cards c
	left join lateral (select id, address from accounts where card_no = c.card_no and type = 'card_held' offset 0) h on true
	cross join lateral (select auth_id, merchant_id, card_no, txn_amount, txn_currency, fx_rate, amount, fee, held
	                    from audit_authorizations where card_no = c.card_no offset 0) a
	cross join lateral (
	  select count(*) filter (where e.kind = 'CARD_AUTH') as auths,
	         count(*) filter (where e.merchant_id <> a.merchant_id or e.card_no is distinct from a.card_no) as foreign_entries,
	         coalesce(sum(p.into_held) filter (where e.kind = 'CARD_AUTH'), 0) as auth_held,
	         coalesce(sum(p.into_held), 0) as net_held,
	         coalesce(bool_or(e.kind = 'CARD_AUTH' and e.metadata ? 'facts' and (
	             e.metadata ->> 'fx_from_amount' is distinct from a.txn_amount::text
	             or split_part(e.metadata ->> 'fx_pair', '/', 1) is distinct from a.txn_currency
	             or e.metadata ->> 'fx_mid_rate' is distinct from a.fx_rate
	             or e.metadata ->> 'fee_amount' is distinct from a.fee::text)), false) as facts_differ
	  from (select merchant_id, merchant_seq, kind, card_no, metadata from entries where auth_id = a.auth_id offset 0) e
	  cross join lateral (
	    select coalesce(sum(case when p.destination_id = h.id then p.amount when p.source_id = h.id then -p.amount else 0 end), 0) as into_held
	    from (select source_id, destination_id, amount from postings
	          where merchant_id = e.merchant_id and merchant_seq = e.merchant_seq offset 0) p) p
	) j
	cross join lateral (select case
	    when j.auths <> 1 then format('authorization %s is named by %s CARD_AUTH entries, not 1', a.auth_id, j.auths)
	    when j.foreign_entries > 0 then format('%s entries naming authorization %s belong to another merchant or card', j.foreign_entries, a.auth_id)
	    when j.auth_held <> a.amount + a.fee then format('the CARD_AUTH of authorization %s holds %s, the authorization approved %s', a.auth_id, j.auth_held, a.amount + a.fee)
	    when j.facts_differ then format('the facts of the CARD_AUTH of authorization %s (amount, currency, rate, fee) are not the authorization''s', a.auth_id)
	    when j.net_held <> a.held then format('the entries naming authorization %s leave %s held, the authorization holds %s', a.auth_id, j.net_held, a.held)
	  end as detail) x
	where ($1::bigint = 0 or c.merchant_id = $1) and x.detail is not null
	order by a.merchant_id, a.auth_id
	limit 1000`}
