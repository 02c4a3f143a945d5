package network

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/fx"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Bounds of the card network's messages (docs/network.md, "Bounds"). The
// processor is trusted to be the processor, not to be sane: a bug or a
// replayed file on its side must not credit a card with more than was ever
// spent on it, nor capture far beyond what was authorized, nor move an
// amount no card could hold. Issuers apply the same three limits: a largest
// amount per message and currency, the card schemes' tolerance for a
// clearing above its authorization (tips, fuel), and refunds matched against
// what was captured.

// Bounds configures the bounds; the zero value means the defaults.
// Amounts are minor units of their currency (JPY 1000 is 1000, USD 10.00 is
// 1000).
type Bounds struct {
	// MessageMax is the largest amount of one authorization, clearing,
	// reversal or refund, per currency. A currency not listed gets the USD
	// figure (default NetworkMessageMaxUSD) converted at the operator's mid
	// rate, rounded down, or the same number of whole units without a rate:
	// the rule of the KYB tier limits (docs/cards.md).
	MessageMax map[string]int64
	// OverCaptureBps is how far a clearing may exceed the amount its
	// authorization approved, in basis points of that amount, in the
	// transaction's currency. 0 means the default, OverCaptureBpsDefault
	// (20 %); NoOverCapture allows none.
	OverCaptureBps int64
	// UnmatchedRefundMax is, per currency, how much more a card may be
	// refunded over its life than the network captured on it. A currency
	// not listed allows nothing: every refund is matched by captures.
	UnmatchedRefundMax map[string]int64
}

// Defaults of Bounds.
const (
	// NetworkMessageMaxUSD is the default largest network message: the
	// largest card balance of the highest KYB tier, so that no card a
	// merchant may hold is out of reach of one message.
	NetworkMessageMaxUSD int64 = 1_000_000_00
	// OverCaptureBpsDefault is the default over-capture tolerance, 20 %:
	// the tolerance Visa and Mastercard give restaurants, bars and taxis
	// for a tip added after the authorization.
	OverCaptureBpsDefault int64 = 2000
	// NoOverCapture in OverCaptureBps refuses any clearing above its
	// authorization.
	NoOverCapture int64 = -1
	// OverCaptureBpsMax bounds the setting: a clearing may be at most
	// twice its authorization.
	OverCaptureBpsMax int64 = 10_000
)

// withDefaults returns b with its defaults filled in, and copies of its
// maps (the caller may change its own). Applying it twice changes nothing.
func (b Bounds) withDefaults() Bounds {
	out := Bounds{OverCaptureBps: b.OverCaptureBps, MessageMax: map[string]int64{}, UnmatchedRefundMax: map[string]int64{}}
	for cur, v := range b.MessageMax {
		if v > 0 {
			out.MessageMax[cur] = min(v, postings.AmountMinorMax)
		}
	}
	if _, ok := out.MessageMax["USD"]; !ok {
		out.MessageMax["USD"] = NetworkMessageMaxUSD
	}
	for cur, v := range b.UnmatchedRefundMax {
		if v > 0 {
			out.UnmatchedRefundMax[cur] = min(v, postings.AmountMinorMax)
		}
	}
	switch {
	case out.OverCaptureBps == 0:
		out.OverCaptureBps = OverCaptureBpsDefault
	case out.OverCaptureBps < 0:
		out.OverCaptureBps = NoOverCapture
	case out.OverCaptureBps > OverCaptureBpsMax:
		out.OverCaptureBps = OverCaptureBpsMax
	}
	return out
}

// overCaptureBps is the tolerance in force, NoOverCapture being 0.
func (b *Bounds) overCaptureBps() int64 { return max(0, b.OverCaptureBps) }

// RespInvalidAmount is the ISO 8583 decline "invalid amount": an
// authorization above the largest network message of its currency.
const RespInvalidAmount = "13"

// messageMax returns the largest network message in currency.
func (s *Service) messageMax(tx *ledger.Tx, currency string) (int64, error) {
	b := &s.cfg.Bounds
	if v, ok := b.MessageMax[currency]; ok {
		return v, nil
	}
	n := batchOf.Of(tx)
	if v, ok := n.messageMax[currency]; ok {
		return v, nil
	}
	to, err := postings.LookupCurrency(currency)
	if err != nil {
		// Nothing can be converted from it: the authorization is declined
		// 05 and the other messages carry the card's currency.
		return postings.AmountMinorMax, nil
	}
	v, err := fx.USDFigure(tx.Context(), tx.DB(), b.MessageMax["USD"], to)
	if err != nil {
		return 0, err
	}
	n.messageMax[currency] = v
	return v, nil
}

// boundMessage refuses an amount above the largest network message of its
// currency.
func (s *Service) boundMessage(tx *ledger.Tx, currency string, amount int64) error {
	maxMinor, err := s.messageMax(tx, currency)
	if err != nil || amount <= maxMinor {
		return err
	}
	return postings.ReasonErrorf(postings.ELIMIT, postings.ReasonNetworkMessageMax,
		"the amount exceeds the largest network message in %s, %s", currency, formatMoney(maxMinor, currency))
}

// boundClear refuses a clearing above the largest network message, or
// above its authorization by more than the over-capture tolerance. The
// tolerance is on the amount the authorization approved, in the
// transaction's currency: no rate is involved, and partial reversals do not
// lower it.
func (s *Service) boundClear(tx *ledger.Tx, r *authRow, amount int64) error {
	if err := s.boundMessage(tx, r.TxnCurrency, amount); err != nil {
		return err
	}
	bps := s.cfg.Bounds.overCaptureBps()
	if !overCaptured(amount, r.TxnAmount, bps) {
		return nil
	}
	return postings.ReasonErrorf(postings.ELIMIT, postings.ReasonOverCapture,
		"the clearing exceeds the authorized %s by more than the over-capture tolerance of %s %%",
		formatMoney(r.TxnAmount, r.TxnCurrency), formatBps(bps))
}

// overCaptured reports whether amount exceeds authorized by more than bps
// basis points: amount × 10⁴ > authorized × (10⁴ + bps), compared exactly
// in 128 bits, so that no rounding decides a clearing.
func overCaptured(amount, authorized, bps int64) bool {
	hiA, loA := bits.Mul64(uint64(amount), 10_000)
	hiB, loB := bits.Mul64(uint64(authorized), uint64(10_000+bps))
	return hiA > hiB || (hiA == hiB && loA > loB)
}

// boundRefund refuses a refund above the largest network message, or one
// that would take what the card was refunded over its life beyond what the
// network captured on it plus the operator's allowance for unmatched
// refunds in its currency. A refund message names the card, not the
// purchase (the networks do not always link them), so refunds are matched
// per card.
func (s *Service) boundRefund(tx *ledger.Tx, c *cards.BatchCard, amount int64) error {
	cur := c.Currency()
	if err := s.boundMessage(tx, cur, amount); err != nil {
		return err
	}
	captured, refunded, err := cardNetworkTotals(tx, c.No())
	if err != nil {
		return err
	}
	allowance := s.cfg.Bounds.UnmatchedRefundMax[cur]
	room := max(0, satAdd(captured, allowance)-refunded)
	if amount <= room {
		return nil
	}
	if allowance == 0 {
		return postings.ReasonErrorf(postings.ELIMIT, postings.ReasonRefundUnmatched,
			"the refund exceeds what the network captured on the card and has not refunded yet, %s", formatMoney(room, cur))
	}
	return postings.ReasonErrorf(postings.ELIMIT, postings.ReasonRefundUnmatched,
		"the refund exceeds what the network captured on the card and has not refunded yet plus the %s allowed unmatched, %s",
		formatMoney(allowance, cur), formatMoney(room, cur))
}

// stmtCardNetworkTotals reads what the network captured on a card (amount
// and fee, from its authorizations other than those of $2, which the batch
// holds) and what it refunded (the CARD_REFUND entries: the journal is the
// truth). Both are index probes (entries_card_refund_idx, 0008), capped at
// the largest amount so that no sum overflows (least ignores a NULL: the
// coalesce comes first).
var stmtCardNetworkTotals = ledger.NewStmt(`
	select (select least(coalesce(sum(a.captured), 0), 1000000000000000000) from authorizations a
	        where a.card_no = $1::text and a.auth_id <> all($2::text[]))::bigint,
	       (select least(coalesce(sum(p.amount), 0), 1000000000000000000) from entries e
	        cross join lateral (select p.amount from postings p
	                            where p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq offset 0) p
	        where e.card_no = $1::text and e.kind = 'CARD_REFUND')::bigint`)

// cardNetworkTotals returns what the network captured on a card and what it
// refunded, as this batch sees them: the committed rows plus the batch's
// own changes (its authorizations and entries are written at its end).
func cardNetworkTotals(tx *ledger.Tx, cardNo string) (captured, refunded int64, err error) {
	var inBatch []string
	for id, a := range batchOf.Of(tx).auths {
		if a.row.CardNo == cardNo {
			inBatch = append(inBatch, id)
			captured = satAdd(captured, a.row.Captured)
		}
	}
	for _, rec := range tx.Entries() {
		if rec.Kind == postings.KindCardRefund && rec.Refs.CardNo == cardNo {
			for _, p := range rec.Postings {
				refunded = satAdd(refunded, p.Amount)
			}
		}
	}
	if inBatch == nil {
		inBatch = []string{}
	}
	var dbCaptured, dbRefunded int64
	p := tx.Pipeline()
	p.Query(stmtCardNetworkTotals, func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&dbCaptured, &dbRefunded); err != nil {
				return err
			}
		}
		return nil
	}, cardNo, inBatch)
	if err := p.Send(); err != nil {
		return 0, 0, err
	}
	return satAdd(captured, dbCaptured), satAdd(refunded, dbRefunded), nil
}

// satAdd adds two non-negative amounts, saturating instead of overflowing.
func satAdd(a, b int64) int64 {
	if s, ok := postings.AddChecked(a, b); ok {
		return s
	}
	return math.MaxInt64
}

// formatMoney is an amount with its currency for a message: "10.00 USD".
func formatMoney(minor int64, currency string) string {
	cur, err := postings.LookupCurrency(currency)
	if err != nil {
		return strconv.FormatInt(minor, 10) + " " + currency
	}
	return postings.FormatMinor(minor, cur) + " " + cur.Code
}

// formatBps writes basis points as a percentage: 2000 is "20", 1250 "12.5".
func formatBps(bps int64) string {
	s := strconv.FormatInt(bps/100, 10)
	if r := bps % 100; r != 0 {
		frac := strconv.FormatInt(100+r, 10)[1:]
		if frac[1] == '0' {
			frac = frac[:1]
		}
		s += "." + frac
	}
	return s
}
