package cards

import (
	"context"
	"database/sql"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// FreezeCard moves an ACTIVE card to FROZEN; a FROZEN card stays FROZEN
// (idempotent on the target state). ESTATE reason "card_cancelled" for a
// cancelled card.
func (s *Service) FreezeCard(ctx context.Context, merchant int64, cardNo, reason string, idem *ledger.Idempotency) (*Card, error) {
	return s.setStatus(ctx, merchant, cardNo, CardFrozen, reason, idem)
}

// UnfreezeCard moves a FROZEN card to ACTIVE; an ACTIVE card stays ACTIVE.
func (s *Service) UnfreezeCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*Card, error) {
	return s.setStatus(ctx, merchant, cardNo, CardActive, "", idem)
}

func (s *Service) setStatus(ctx context.Context, merchant int64, cardNo, status, reason string, idem *ledger.Idempotency) (*Card, error) {
	cmd := &ledger.Func[Card]{
		Merchant: merchant,
		Want:     func(tx *ledger.Tx) { WantCard(tx, cardNo) },
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*Card, error) {
			c, err := CardOf(tx, merchant, cardNo)
			if err != nil {
				return nil, err
			}
			if c.row.Status == CardCancelled {
				return nil, errCardCancelled()
			}
			if c.row.Status == status {
				return View(tx, c)
			}
			change(tx, c, func(r *cardRow) {
				r.Status = status
				r.FreezeReason = sql.NullString{}
				if status == CardFrozen {
					r.FreezeReason = database.NullString(reason)
				}
			})
			card, err := View(tx, c)
			if err != nil {
				return nil, err
			}
			typ := EventCardFrozen
			if status == CardActive {
				typ = EventCardUnfrozen
			}
			if err := tx.Emit(merchant, ledger.Event{Type: typ, Subject: cardNo, Data: cardEventData(card)}); err != nil {
				return nil, err
			}
			return card, nil
		},
	}
	content := map[string]string{"op": "status", "cardNo": cardNo, "status": status, "reason": reason}
	return ledger.Do(ctx, s.l, idem, content, cmd)
}

// View is the card with its current balances in this batch.
func View(tx *ledger.Tx, c *BatchCard) (*Card, error) {
	r := &c.row
	a, err := tx.PeekBalance(AvailableAccount(r.MerchantID, r.Currency, r.CardNo))
	if err != nil {
		return nil, err
	}
	hd, err := tx.PeekBalance(HeldAccount(r.MerchantID, r.Currency, r.CardNo))
	if err != nil {
		return nil, err
	}
	owed, err := tx.PeekBalance(ReceivableAccount(r.MerchantID, r.Currency, r.CardNo))
	if err != nil {
		return nil, err
	}
	card := cardFromRow(r, a, hd)
	card.Receivable = -owed
	return card, nil
}

// CancelCard cancels a card for good and refunds its available balance to
// the funding account of its currency (CARD_CANCEL_REFUND). Open holds stay
// until they settle, are reversed or expire. ESTATE reason "card_cancelled"
// if it is cancelled already.
func (s *Service) CancelCard(ctx context.Context, merchant int64, cardNo string, idem *ledger.Idempotency) (*CancelResult, error) {
	cmd := &ledger.Func[CancelResult]{
		Merchant: merchant,
		Want:     func(tx *ledger.Tx) { WantCard(tx, cardNo) },
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*CancelResult, error) {
			return cancelCard(tx, merchant, cardNo)
		},
	}
	return ledger.Do(ctx, s.l, idem, map[string]string{"op": "cancel", "cardNo": cardNo}, cmd)
}

func cancelCard(tx *ledger.Tx, merchant int64, cardNo string) (*CancelResult, error) {
	c, err := CardOf(tx, merchant, cardNo)
	if err != nil {
		return nil, err
	}
	if c.row.Status == CardCancelled {
		return nil, errCardCancelled()
	}
	avail := AvailableAccount(merchant, c.row.Currency, cardNo)
	bal, err := tx.PeekBalance(avail)
	if err != nil {
		return nil, err
	}
	refunded := int64(0)
	if bal > 0 {
		// What the card owes (a capture it could not cover) is repaid from
		// its balance first; the rest goes home.
		change(tx, c, func(r *cardRow) { r.Status = CardCancelled })
		ps, err := Credit(tx, c, avail, bal)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if p.Destination.Type == postings.AccountFunding {
				refunded += p.Amount
			}
		}
		if _, err := tx.Post(postings.Entry{Merchant: merchant, Kind: postings.KindCardCancelRefund,
			Refs: postings.Refs{CardNo: cardNo}, Postings: ps}); err != nil {
			return nil, err
		}
	}
	change(tx, c, func(r *cardRow) {
		r.Status = CardCancelled
		r.CancelledAt.Time = tx.Now()
	})
	card, err := View(tx, c)
	if err != nil {
		return nil, err
	}
	if err := tx.Emit(merchant, ledger.Event{Type: EventCardCancelled, Subject: cardNo, Data: cardEventData(card)}); err != nil {
		return nil, err
	}
	return &CancelResult{Card: *card, Refunded: refunded}, nil
}

// Credit returns the postings that credit amount from src to a card: its
// receivable first (what it owes), then its available balance, or the
// funding account of its currency once the card is cancelled.
func Credit(tx *ledger.Tx, c *BatchCard, src postings.Account, amount int64) ([]postings.Posting, error) {
	r := &c.row
	recv := ReceivableAccount(r.MerchantID, r.Currency, r.CardNo)
	owed, err := tx.PeekBalance(recv)
	if err != nil {
		return nil, err
	}
	dst := AvailableAccount(r.MerchantID, r.Currency, r.CardNo)
	if r.Status == CardCancelled {
		dst = FundingAccount(r.MerchantID, r.Currency)
	}
	var ps []postings.Posting
	if repay := min(amount, -owed); repay > 0 {
		ps = append(ps, postings.Posting{Source: src, Destination: recv, Amount: repay, Currency: r.Currency})
		amount -= repay
	}
	if amount > 0 {
		ps = append(ps, postings.Posting{Source: src, Destination: dst, Amount: amount, Currency: r.Currency})
	}
	return ps, nil
}
