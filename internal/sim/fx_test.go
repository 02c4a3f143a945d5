package sim

import (
	"context"
	"math/big"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/postings"
)

// Card authorizations across currencies, in the model: rates from the seed,
// the hold's arithmetic of docs/network.md ("Rounding and the odd minor
// unit") recomputed in exact rational arithmetic (math/big), independent of
// postings' apd and 128-bit paths, and sequences of reversals, clearings
// and refunds that close a hold in pieces.

// simTxnCurrencies are the currencies the network authorizes in: exponents
// 2 (USD, EUR), 0 (JPY) and 3 (KWD, BHD).
var simTxnCurrencies = []string{"USD", "EUR", "JPY", "KWD", "BHD"}

// microUSD is roughly what one unit of each currency is worth, in millionths
// of a dollar: the rates drawn from the seed stay realistic around it.
var microUSD = map[string]int64{"USD": 1_000_000, "EUR": 1_080_000, "JPY": 6_700, "KWD": 3_250_000, "BHD": 2_650_000}

// rateRefreshAfter is how old the rates may grow before the simulation sets
// new ones: well inside the ledger's FXRateMaxAge (24 hours), so that an
// authorization never meets a stale rate, and often enough that holds
// opened under one rate are cleared under the next.
const rateRefreshAfter = 8 * time.Hour

type mRate struct {
	text string
	rat  *big.Rat
}

// setRates draws a rate for every ordered pair of simTxnCurrencies and sets
// it in the ledger (the operator's SetFXRate) and in the model.
func (s *sim) setRates() {
	ctx := context.Background()
	if s.md.rates == nil {
		s.md.rates = map[string]mRate{}
	}
	for _, from := range simTxnCurrencies {
		for _, to := range simTxnCurrencies {
			if from == to {
				continue
			}
			// ±10 % around the reference, to 12 decimals: 4 to 15
			// significant digits.
			x := new(big.Rat).SetFrac64(microUSD[from]*(900_000+s.rng.Int64N(200_001)), microUSD[to]*1_000_000)
			text := strings.TrimRight(strings.TrimRight(x.FloatString(12), "0"), ".")
			rat, ok := new(big.Rat).SetString(text)
			if !ok || rat.Sign() <= 0 {
				s.fail("rate %s/%s %q", from, to, text)
			}
			if _, err := s.l.FX.Set(ctx, from, to, text, 0); err != nil {
				s.fail("SetFXRate %s/%s %s: %v", from, to, text, err)
			}
			s.md.rates[from+"/"+to] = mRate{text, rat}
		}
	}
	s.md.ratesAt = s.nowUTC()
	s.stats["fx rates set"]++
	// A limit the operator did not set follows the USD rate of the KYB
	// tier (docs/cards.md): the remittance maximum of a EUR merchant moves
	// with the rates. The card balance limit was set and must not.
	for _, m := range s.md.merchants {
		p, err := s.l.Cards.Profile(ctx, m.id)
		if err != nil {
			s.fail("Profile: %v", err)
		}
		for _, lim := range p.Limits {
			if lim.Currency == m.cur {
				if lim.CardBalanceMax != m.lim.CardBalanceMax {
					s.fail("merchant %d: new rates changed the card balance limit it set, %d → %d", m.id, m.lim.CardBalanceMax, lim.CardBalanceMax)
				}
				m.lim = lim
			}
		}
	}
}

func (s *sim) refreshRatesIfOld() {
	if s.nowUTC().Sub(s.md.ratesAt) >= rateRefreshAfter {
		s.setRates()
	}
}

// pow10 is 10^e as a rational.
func pow10(e int32) *big.Rat {
	if e < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil))
	}
	return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
}

// roundRat makes a non-negative rational whole: up or down.
func roundRat(x *big.Rat, up bool) *big.Int {
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if up && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// convertUp is minor units of from in minor units of to at rate, rounded
// up (the cardholder pays), or -1 beyond AmountMinorMax.
func convertUp(minor int64, from, to string, rate *big.Rat) int64 {
	x := new(big.Rat).Mul(new(big.Rat).SetInt64(minor), pow10(postings.MustCurrency(to).Exponent-postings.MustCurrency(from).Exponent))
	x.Mul(x, rate)
	v := roundRat(x, true)
	if !v.IsInt64() || v.Int64() > postings.AmountMinorMax {
		return -1
	}
	return v.Int64()
}

// feeUp is the cross-border fee of 1.5 %, rounded up.
func feeUp(amount int64) int64 {
	return roundRat(new(big.Rat).SetFrac64(amount*150, 10_000), true).Int64()
}

// share is x × part / whole, rounded up or down.
func share(x, part, whole int64, up bool) int64 {
	p := new(big.Int).Mul(big.NewInt(x), big.NewInt(part))
	return roundRat(new(big.Rat).SetFrac(p, big.NewInt(whole)), up).Int64()
}

// reversedShare is what reversals of r (in total) of hold h have released:
// the shares of its amount and fee, each rounded down.
func (h *mHold) reversedShare(r int64) (amount, fee int64) {
	return share(h.cardAmt, r, h.txn, false), share(h.fee, r, h.txn, false)
}

// capture is what a clearing of c charges hold h: principal and fee.
func (h *mHold) capture(c int64) (amount, fee int64) {
	open := h.txn - h.reversed
	doneA, doneF := h.reversedShare(h.reversed)
	if c <= open {
		return share(h.cardAmt, h.reversed+c, h.txn, true) - doneA, share(h.fee, h.reversed+c, h.txn, true) - doneF
	}
	amount, fee = h.cardAmt-doneA, h.fee-doneF
	cardCur := h.card.m.cur
	if h.txnCur == cardCur {
		return amount + c - open, fee
	}
	excess := convertUp(c-open, h.txnCur, cardCur, h.rate)
	return amount + excess, fee + feeUp(excess)
}

// planSequence queues messages that close a new hold in pieces, as a
// network does: partial reversals that add up to the whole, or partial
// reversals and a clearing of the rest (or of part of it) sometimes
// followed by a refund. The simulated network delivers them in any order,
// so a clearing may come first and close the hold; the model expects
// whatever the order makes of them.
func (s *sim) planSequence(h *mHold) {
	pieces := splitPieces(s, h.txn)
	last := len(pieces) - 1
	for _, p := range pieces[:last] {
		s.queue = append(s.queue, &netMsg{kind: "reverse", id: s.newKey("net"), hold: h, card: h.card, amount: p})
	}
	switch r := s.rng.IntN(100); {
	case r < 45:
		amount := pieces[last]
		if s.chance(30) {
			amount = 0 // implied: whatever is still open
		}
		s.queue = append(s.queue, &netMsg{kind: "reverse", id: s.newKey("net"), hold: h, card: h.card, amount: amount})
		s.stats["hold sequence: reversed whole"]++
	default:
		amount := pieces[last]
		if s.chance(30) && amount > 1 {
			amount = s.between(1, amount-1)
		}
		s.queue = append(s.queue, &netMsg{kind: "clear", id: s.newKey("net"), hold: h, card: h.card, amount: amount})
		if s.chance(40) {
			// A merchant refund later, in the card's currency.
			s.queue = append(s.queue, &netMsg{kind: "refund", id: s.newKey("net"), card: h.card,
				amount: s.between(1, max(1, h.cardAmt/2)), currency: h.card.m.cur})
		}
		s.stats["hold sequence: reversed then cleared"]++
	}
}

// splitPieces cuts n into 1 to 4 positive pieces, often tiny ones where
// rounding bites.
func splitPieces(s *sim, n int64) []int64 {
	var out []int64
	for k := s.rng.IntN(4); k > 0 && n > 1; k-- {
		p := s.between(1, n-1)
		if s.chance(40) {
			p = s.between(1, min(n-1, 3))
		}
		out = append(out, p)
		n -= p
	}
	return append(out, n)
}

// txnCurrencyFor is the currency of a new authorization on a card of m:
// mostly its own, otherwise another from simTxnCurrencies.
func (s *sim) txnCurrencyFor(m *mMerchant) string {
	if s.chance(55) {
		return m.cur
	}
	for {
		if c := simTxnCurrencies[s.rng.IntN(len(simTxnCurrencies))]; c != m.cur {
			return c
		}
	}
}

// authDecision is the model's decision on an authorization of amount in
// txnCur on card c: the response code, and for an approval (or a decline
// after the conversion) the card amount and fee.
func (s *sim) authDecision(c *mCard, amount int64, txnCur string) (code string, cardAmt, fee int64, rate mRate) {
	m := c.m
	if m.disabled { // first, as the network checks it (disabled_test.go)
		s.stats["authorizations of a disabled merchant's card"]++
		return network.RespDoNotHonour, 0, 0, rate
	}
	switch c.status {
	case cards.CardCancelled:
		return network.RespCancelled, 0, 0, rate
	case cards.CardFrozen:
		return network.RespNotPermitted, 0, 0, rate
	}
	if amount > simMessageMax[txnCur] {
		return network.RespInvalidAmount, 0, 0, rate
	}
	cardAmt = amount
	if txnCur != m.cur {
		rate = s.md.rates[txnCur+"/"+m.cur]
		if cardAmt = convertUp(amount, txnCur, m.cur, rate.rat); cardAmt < 0 {
			return network.RespDoNotHonour, 0, 0, rate
		}
		fee = feeUp(cardAmt)
	}
	switch total := cardAmt + fee; {
	case total > m.lim.CardBalanceMax:
		return network.RespOverLimit, cardAmt, fee, rate
	case total > s.md.get(availOf(c)):
		return network.RespInsufficient, cardAmt, fee, rate
	}
	return network.RespApproved, cardAmt, fee, rate
}
