package cards

import (
	"context"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Transfer moves money between a card and a funding account (docs/cards.md).
// Errors: ENOTFOUND "card", ESTATE "card_frozen" (IN only) or
// "card_cancelled", EFORBIDDEN "currency", EFORBIDDEN "fx_pair" (no rate),
// ESTATE "fx_rate_stale", EINSUFFICIENT, ELIMIT "card_balance_max".
func (s *Service) Transfer(ctx context.Context, merchant int64, in TransferInput, idem *ledger.Idempotency) (*TransferResult, error) {
	if in.Direction != DirectionIn && in.Direction != DirectionOut {
		return nil, postings.FieldErrorf("direction", "must be IN or OUT")
	}
	if in.Amount <= 0 || in.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	cmd := &ledger.Func[TransferResult]{
		Merchant: merchant,
		Want: func(tx *ledger.Tx) {
			WantCard(tx, in.CardNo)
			tx.WantAccount(FundingAccount(merchant, in.Currency))
			if in.Direction == DirectionIn {
				// A top-up is a card load; mostly in the card's currency,
				// which is the funding side's (a conversion reads the other
				// on demand).
				b := batchOf.Of(tx)
				b.wantLoads = append(b.wantLoads, issueKey{merchant: merchant, currency: in.Currency})
			}
		},
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*TransferResult, error) {
			return s.transfer(tx, m, in)
		},
	}
	return ledger.Do(ctx, s.l, idem, in, cmd)
}

func (s *Service) transfer(tx *ledger.Tx, m *ledger.Merchant, in TransferInput) (*TransferResult, error) {
	c, err := CardOf(tx, m.ID, in.CardNo)
	if err != nil {
		return nil, err
	}
	switch {
	case c.row.Status == CardCancelled:
		return nil, errCardCancelled()
	case c.row.Status == CardFrozen && in.Direction == DirectionIn:
		// A frozen card may be emptied back into the funding account (what
		// merchants expect when they freeze a card they suspect), but not
		// topped up.
		return nil, errCardFrozen()
	}
	if !m.HasCurrency(in.Currency) {
		return nil, errNotMerchantCurrency(in.Currency)
	}
	fund := FundingAccount(m.ID, in.Currency)
	avail := AvailableAccount(m.ID, c.row.Currency, c.row.CardNo)
	res := &TransferResult{
		TxID: "trf_" + database.RandomID(20), CardNo: c.row.CardNo, Direction: in.Direction,
		Amount: in.Amount, Currency: in.Currency, CardAmount: in.Amount, CardCurrency: c.row.Currency,
		CreatedAt: tx.Now(),
	}
	e := postings.Entry{Merchant: m.ID, Kind: postings.KindCardTransferIn,
		Refs: postings.Refs{CardNo: c.row.CardNo, TxID: res.TxID}}
	if in.Direction == DirectionOut {
		e.Kind = postings.KindCardTransferOut
	}
	switch {
	case in.Currency == c.row.Currency && in.Direction == DirectionOut:
		e.Postings = []postings.Posting{{Source: avail, Destination: fund, Amount: in.Amount, Currency: in.Currency}}
	case in.Currency == c.row.Currency:
		if e.Postings, err = Credit(tx, c, fund, in.Amount); err != nil {
			return nil, err
		}
	default:
		if err := s.convertTransfer(tx, &e, res, c, fund, avail); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Post(e); err != nil {
		return nil, err
	}
	if res.CardBalance, err = tx.Balance(avail); err != nil {
		return nil, err
	}
	if res.FundingBalance, err = tx.Balance(fund); err != nil {
		return nil, err
	}
	if in.Direction == DirectionIn {
		lim, err := batchOf.Of(tx).limit(tx, m, c.row.Currency)
		if err != nil {
			return nil, err
		}
		if res.CardBalance > lim.CardBalanceMax {
			cur := postings.MustCurrency(c.row.Currency)
			return nil, postings.ReasonErrorf(postings.ELIMIT, postings.ReasonCardBalanceMax,
				"the card balance would exceed the largest allowed, %s %s", postings.FormatMinor(lim.CardBalanceMax, cur), cur.Code)
		}
	}
	return res, nil
}

// convertTransfer fills a cross-currency transfer: two balanced legs through
// the FX position accounts. The rate is the operator's mid rate from the
// source currency to the destination's with the spread taken off; the amount
// the card receives (IN) rounds down and the amount it pays (OUT) rounds up,
// so the gateway never pays out a fraction it did not take in. The
// conversion is computed by the facts the entry records (postings'
// NewFXFact, as a foreign CARD_AUTH's), with the rate version and its
// time, so that audit verify re-derives it (docs/audit.md, "Economic
// facts"): what the entry moves and what it says it converted are one
// computation.
func (s *Service) convertTransfer(tx *ledger.Tx, e *postings.Entry, res *TransferResult, c *BatchCard, fund, avail postings.Account) error {
	fundCur, cardCur := postings.MustCurrency(res.Currency), postings.MustCurrency(res.CardCurrency)
	base, quote := res.Currency, res.CardCurrency
	if res.Direction == DirectionOut {
		base, quote = quote, base
	}
	rate, err := s.fx.Current(tx, base, quote)
	if err != nil {
		return err
	}
	// The spread comes off the rate of the direction the money flows in,
	// rounded down: the merchant gets the worse side.
	var fact postings.FXFact
	if res.Direction == DirectionIn {
		fact, err = postings.NewFXFact(res.Amount, fundCur, cardCur, rate.Mid, rate.SpreadBps, rate.Version, rate.UpdatedAt, postings.RoundDown)
		res.CardAmount = fact.Amount
	} else {
		// The merchant receives Amount: the card pays Amount / rate, up.
		fact, err = postings.NewInverseFXFact(res.Amount, cardCur, fundCur, rate.Mid, rate.SpreadBps, rate.Version, rate.UpdatedAt, postings.RoundUp)
		res.CardAmount = fact.FromAmount
	}
	if err != nil {
		return postings.WithField(err, "amount")
	}
	client, err := fact.ClientRate()
	if err != nil {
		return err
	}
	res.FXRate, res.MidRate, res.SpreadBps = client.String(), rate.MidRate, rate.SpreadBps
	fxFund := postings.MerchantAccount(e.Merchant, postings.AccountFXPosition, res.Currency)
	fxCard := postings.MerchantAccount(e.Merchant, postings.AccountFXPosition, res.CardCurrency)
	if res.Direction == DirectionIn {
		credit, err := Credit(tx, c, fxCard, res.CardAmount)
		if err != nil {
			return err
		}
		e.Postings = append([]postings.Posting{
			{Source: fund, Destination: fxFund, Amount: res.Amount, Currency: res.Currency},
		}, credit...)
	} else {
		e.Postings = []postings.Posting{
			{Source: avail, Destination: fxCard, Amount: res.CardAmount, Currency: res.CardCurrency},
			{Source: fxFund, Destination: fund, Amount: res.Amount, Currency: res.Currency},
		}
	}
	// fx_rate, the client rate, as before the facts; fx_pair, fx_mid_rate
	// and fx_spread_bps are facts now.
	e.Metadata = postings.PutFacts(map[string]string{postings.MetaFXClientRate: res.FXRate}, &fact, nil)
	return nil
}
