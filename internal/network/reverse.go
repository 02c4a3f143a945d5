package network

import (
	"context"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Reverse releases a hold, fully (Amount 0 or the whole open amount) or
// partly. Nothing is released twice: a closed authorization is refused, and
// a partial amount above what is still held is refused.
func (s *Service) Reverse(ctx context.Context, req ReverseRequest) (*HoldResult, error) {
	if req.Amount < 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be positive and at most the maximum amount")
	}
	return s.holdCmd(ctx, req.MessageID, req.AuthID, "reverse", req, func(tx *ledger.Tx, m *ledger.Merchant, a *authState) (*HoldResult, error) {
		return s.reverse(tx, m, a, req.Amount)
	})
}

func (s *Service) reverse(tx *ledger.Tx, m *ledger.Merchant, a *authState, txnAmount int64) (*HoldResult, error) {
	r := &a.row
	if r.Status != AuthOpen {
		return nil, errHoldClosed(r)
	}
	if err := s.boundMessage(tx, r.TxnCurrency, txnAmount); err != nil {
		return nil, err
	}
	c := cards.Loaded(tx, r.CardNo)
	res := &HoldResult{AuthID: r.AuthID, CardNo: r.CardNo, Currency: r.Currency, CreatedAt: tx.Now()}
	// A reversal names an amount of the transaction's currency, or none for
	// all that is still open. It releases its share of the hold as
	// approved, principal and fee, rounded down (the card receives); the
	// reversal that reverses all that is open, explicitly or implied,
	// releases everything still held, fee included (docs/network.md).
	open := r.TxnAmount - r.TxnReversed
	if txnAmount == 0 {
		txnAmount = open
	}
	if txnAmount > open {
		return nil, postings.FieldErrorf("amount", "exceeds what the authorization still holds")
	}
	release := r.Held
	if txnAmount < open {
		hold, err := holdOf(r)
		if err != nil {
			return nil, err
		}
		part, err := hold.Reverse(r.TxnReversed, txnAmount)
		if err != nil {
			return nil, err
		}
		// Never more than is held: a hold reversed in part before its
		// transaction amount was tracked (sql/0008) may hold less.
		release = min(part.Total(), r.Held-1)
	}
	// A reversal too small to release a whole minor unit moves no money:
	// it is counted, and its unit goes back with a later message.
	if release > 0 {
		if err := releaseHold(tx, m, c, r, release, postings.KindReversal); err != nil {
			return nil, err
		}
	}
	changeAuth(tx, a, func(r *authRow) {
		r.TxnReversed += txnAmount
		r.Held -= release
		r.Released += release
		if r.TxnReversed == r.TxnAmount {
			r.Status = AuthReversed
		}
	})
	res.Released = release
	return finishHold(tx, m, a, res, EventAuthReversed)
}
