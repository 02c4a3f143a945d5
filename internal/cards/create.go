package cards

import (
	"context"
	"errors"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// CreateCard issues a card on one of the merchant's BIN entries and funds it
// from the funding account of its currency (CARD_FUND). Errors: EFORBIDDEN
// reason "currency" or "bin", ELIMIT reason "card_balance_max" or
// "daily_card_issue", EINSUFFICIENT, ECONFLICT (idempotency).
func (s *Service) CreateCard(ctx context.Context, merchant int64, in CreateCardInput, idem *ledger.Idempotency) (*Card, error) {
	if in.Amount < 0 || in.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be between 0 and the maximum amount")
	}
	if s.merchants.Sealer() == nil {
		return nil, errors.New("cards: no data key configured")
	}
	return ledger.Do(ctx, s.l, idem, in, s.createCmd(merchant, in, true))
}

// createCmd is a card creation. With prefetch, its batch reads the funding
// account, the BIN access and today's issuing counter with the head lock;
// the command reads the last two on demand otherwise (a round trip each).
func (s *Service) createCmd(merchant int64, in CreateCardInput, prefetch bool) *ledger.Func[Card] {
	return &ledger.Func[Card]{
		Merchant: merchant,
		Want: func(tx *ledger.Tx) {
			tx.WantAccount(FundingAccount(merchant, in.Currency))
			if prefetch {
				b := batchOf.Of(tx)
				b.wantBins = append(b.wantBins, binKey{merchant: merchant, bin: in.Bin, currency: in.Currency})
			}
		},
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*Card, error) {
			return s.createCard(tx, m, in)
		},
	}
}

func (s *Service) createCard(tx *ledger.Tx, m *ledger.Merchant, in CreateCardInput) (*Card, error) {
	if !m.HasCurrency(in.Currency) {
		return nil, errNotMerchantCurrency(in.Currency)
	}
	b := batchOf.Of(tx)
	bin, err := b.binFor(tx, m, in.Bin, in.Currency)
	if err != nil {
		return nil, err
	}
	lim, err := b.limit(tx, m, in.Currency)
	if err != nil {
		return nil, err
	}
	cur := postings.MustCurrency(in.Currency)
	if in.Amount > lim.CardBalanceMax {
		return nil, postings.ReasonErrorf(postings.ELIMIT, postings.ReasonCardBalanceMax,
			"the amount exceeds the largest card balance allowed, %s %s", postings.FormatMinor(lim.CardBalanceMax, cur), cur.Code)
	}
	// The day's card-load limit is charged by the funding entry itself
	// (loads.go), like every other load onto a card.

	now := tx.Now()
	cardNo := database.CellID("crd_", s.cell)
	pan := s.newPAN(in.Bin)
	exp := now.UTC().AddDate(3, 0, 0)
	sealer := s.merchants.Sealer()
	c := b.add(tx, cardRow{
		CardNo: cardNo, MerchantID: m.ID, Bin: in.Bin, Currency: in.Currency, Network: bin.Network,
		Last4: pan[len(pan)-4:], ExpiryMonth: int(exp.Month()), ExpiryYear: exp.Year(),
		PanSealed:      sealer.Seal([]byte(pan), "pan:"+cardNo),
		PanFingerprint: sealer.MAC([]byte(pan)),
		Status:         CardActive, Remark: database.NullString(in.Remark), CallbackURL: database.NullString(in.CallbackURL),
		CreatedAt: now, UpdatedAt: now,
	})
	if in.Amount > 0 {
		if _, err := tx.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindCardFund,
			Refs: postings.Refs{CardNo: cardNo},
			Postings: []postings.Posting{{
				Source:      FundingAccount(m.ID, in.Currency),
				Destination: AvailableAccount(m.ID, in.Currency, cardNo), Amount: in.Amount, Currency: in.Currency,
			}}}); err != nil {
			return nil, err
		}
	}
	card := cardFromRow(&c.row, in.Amount, 0)
	ev := ledger.Event{Type: EventCardCreated, Subject: cardNo, CallbackURL: in.CallbackURL, RequestURLOnly: true,
		Data: cardEventData(card)}
	if err := tx.Emit(m.ID, ev); err != nil {
		return nil, err
	}
	return card, nil
}
