package network

import (
	"context"
	"strconv"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Clear captures an authorization: partially (the rest of the hold is
// released), exactly, or above the hold. A capture always succeeds on an
// open authorization, also on a frozen or cancelled card: what the hold
// does not cover comes from the card's available balance, and what that
// cannot cover is carried on the card's receivable (docs/network.md).
func (s *Service) Clear(ctx context.Context, req ClearRequest) (*HoldResult, error) {
	if req.Amount <= 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	return s.holdCmd(ctx, req.MessageID, req.AuthID, "clear", req, func(tx *ledger.Tx, m *ledger.Merchant, a *authState) (*HoldResult, error) {
		return s.clear(tx, m, a, req)
	})
}

func (s *Service) clear(tx *ledger.Tx, m *ledger.Merchant, a *authState, req ClearRequest) (*HoldResult, error) {
	r := &a.row
	if r.Status != AuthOpen {
		return nil, errHoldClosed(r)
	}
	if err := s.boundClear(tx, r, req.Amount); err != nil {
		return nil, err
	}
	c := cards.Loaded(tx, r.CardNo)
	if c == nil {
		return nil, ledger.Invariantf("authorization %s without its card", r.AuthID)
	}
	// The clearing takes its share of the hold as approved (rounded up: the
	// cardholder pays), all of what is open when it clears all of it, and
	// above that the excess at the authorization's rate (docs/network.md).
	hold, err := holdOf(r)
	if err != nil {
		return nil, err
	}
	part, err := hold.Capture(r.TxnReversed, req.Amount)
	if err != nil {
		return nil, err
	}
	capture, fee := part.Amount, part.Fee
	avail, held := cards.AvailableAccount(r.MerchantID, r.Currency, r.CardNo), cards.HeldAccount(r.MerchantID, r.Currency, r.CardNo)
	recv := cards.ReceivableAccount(r.MerchantID, r.Currency, r.CardNo)
	availBal, err := tx.PeekBalance(avail)
	if err != nil {
		return nil, err
	}
	res := &HoldResult{AuthID: r.AuthID, CardNo: r.CardNo, Currency: r.Currency, Captured: capture, Fee: fee, CreatedAt: tx.Now()}
	// Take each charge from the hold first, then available, then the
	// receivable.
	remainingHold, remainingAvail := r.Held, availBal
	charge := func(amount int64, dst postings.Account) []postings.Posting {
		var ps []postings.Posting
		add := func(src, to postings.Account, n int64) {
			if n > 0 {
				ps = append(ps, postings.Posting{Source: src, Destination: to, Amount: n, Currency: r.Currency})
			}
		}
		fromHold := min(amount, remainingHold)
		remainingHold -= fromHold
		fromAvail := min(amount-fromHold, remainingAvail)
		remainingAvail -= fromAvail
		fromRecv := amount - fromHold - fromAvail
		res.Receivable += fromRecv
		// What the card lacks is lent to it by its receivable first, and
		// the card pays the charge: the bill then shows the debt
		// (RECEIVABLE: receivable −, card +) beside the charge (card −),
		// in the period of the capture (docs/finance.md).
		add(recv, avail, fromRecv)
		add(held, dst, fromHold)
		add(avail, dst, fromAvail+fromRecv)
		return ps
	}
	settlement := postings.MerchantAccount(r.MerchantID, postings.AccountNetworkSettlement, r.Currency)
	refs := postings.Refs{CardNo: r.CardNo, AuthID: r.AuthID}
	// The clearing's message id and the network's amount travel with the
	// entry: settlement-file reconciliation matches on them.
	meta := map[string]string{"message_id": req.MessageID,
		"txn_amount": strconv.FormatInt(req.Amount, 10), "txn_currency": r.TxnCurrency}
	settle, err := tx.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindCardSettle, Refs: refs,
		Metadata: meta, Postings: charge(capture, settlement)})
	if err != nil {
		return nil, err
	}
	if fee > 0 {
		// The fee names the capture it belongs to (its bill lines'
		// relatedTo, postings.MetaFeeFor) and carries its rule, hashed
		// (docs/audit.md).
		feeFact := postings.CapturedFeeFact(fee)
		if _, err := tx.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindFee, Refs: refs,
			Metadata: postings.PutFacts(map[string]string{postings.MetaFeeFor: strconv.FormatInt(settle.Seq, 10)}, nil, &feeFact),
			Postings: charge(fee, postings.MerchantAccount(r.MerchantID, postings.AccountFeeRevenue, r.Currency))}); err != nil {
			return nil, err
		}
	}
	if remainingHold > 0 {
		if err := releaseHold(tx, m, c, r, remainingHold, postings.KindCardAuthRelease); err != nil {
			return nil, err
		}
		res.Released = remainingHold
	}
	changeAuth(tx, a, func(r *authRow) {
		r.Captured = capture + fee
		r.Released += res.Released
		r.Held = 0
		r.Status = AuthCleared
	})
	return finishHold(tx, m, a, res, EventAuthCleared)
}
