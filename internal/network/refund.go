package network

import (
	"context"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Refund credits a card from the network: its available balance, or the
// funding account once the card is cancelled (CARD_REFUND).
func (s *Service) Refund(ctx context.Context, req RefundRequest) (*RefundResult, error) {
	idem, err := idempotency(req.MessageID)
	if err != nil {
		return nil, err
	}
	if req.Amount <= 0 || req.Amount > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	if !postings.IsRefText(req.CardNo) {
		return nil, errCardNotFound()
	}
	merchant, found, err := s.cards.MerchantOf(ctx, req.CardNo)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errCardNotFound()
	}
	cmd := &ledger.Func[RefundResult]{
		Merchant: merchant,
		Want:     func(tx *ledger.Tx) { cards.WantCard(tx, req.CardNo) },
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*RefundResult, error) {
			return s.refund(tx, m, req)
		},
	}
	return ledger.Do(ctx, s.l, idem, map[string]any{"op": "refund", "req": req}, cmd)
}

func (s *Service) refund(tx *ledger.Tx, m *ledger.Merchant, req RefundRequest) (*RefundResult, error) {
	c, err := cards.CardOf(tx, m.ID, req.CardNo)
	if err != nil {
		return nil, err
	}
	if req.Currency != c.Currency() {
		return nil, postings.FieldErrorf("currency", "must be the card's currency, %s", c.Currency())
	}
	if err := s.boundRefund(tx, c, req.Amount); err != nil {
		return nil, err
	}
	src := postings.MerchantAccount(m.ID, postings.AccountNetworkSettlement, c.Currency())
	ps, err := cards.Credit(tx, c, src, req.Amount)
	if err != nil {
		return nil, err
	}
	// The network's message id is the refund's identity: the entry's txId
	// (hashed into the journal, the bill line's txId) tells two equal
	// refunds on one card and day apart and is what a refund file names;
	// the network_refunds row keeps it unique for ever, past the
	// idempotency key's TTL (docs/finance.md, "Refund reconciliation").
	entry, err := tx.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindCardRefund,
		Refs: postings.Refs{CardNo: c.No(), TxID: req.MessageID}, Postings: ps})
	if err != nil {
		return nil, err
	}
	batchOf.Of(tx).addRefund(tx, refundRow{MessageID: req.MessageID, MerchantID: m.ID, MerchantSeq: entry.Seq, CreatedAt: tx.Now()})
	res := &RefundResult{MessageID: req.MessageID, CardNo: c.No(), Amount: req.Amount, Currency: c.Currency(), Credited: "card", CreatedAt: tx.Now()}
	if c.Status() == cards.CardCancelled {
		res.Credited = "funding"
	}
	if res.Available, err = tx.PeekBalance(cards.AvailableAccount(m.ID, c.Currency(), c.No())); err != nil {
		return nil, err
	}
	return res, tx.Emit(m.ID, ledger.Event{Type: EventCardRefund, Subject: c.No(), Data: refundEventData(res)})
}

func errCardNotFound() error {
	return postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonCard, "card not found")
}

func refundEventData(r *RefundResult) map[string]any {
	return map[string]any{
		"messageId": r.MessageID,
		"cardNo":    r.CardNo, "amount": money(r.Amount, r.Currency), "currency": r.Currency,
		"credited": r.Credited, "available": money(r.Available, r.Currency),
		"createdAt": r.CreatedAt.UTC().Format(time.RFC3339),
	}
}
