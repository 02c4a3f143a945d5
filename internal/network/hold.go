package network

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// holdCmd runs fn on one authorization under its merchant's lock.
func (s *Service) holdCmd(ctx context.Context, messageID, authID, op string, content any,
	fn func(tx *ledger.Tx, m *ledger.Merchant, a *authState) (*HoldResult, error)) (*HoldResult, error) {
	idem, err := idempotency(messageID)
	if err != nil {
		return nil, err
	}
	if !postings.IsRefText(authID) {
		return nil, postings.FieldErrorf("authId", "must be 1 to 64 characters of [A-Za-z0-9_.:-]")
	}
	var merchant int64
	err = s.l.DB().NewRaw(`select merchant_id from authorizations where auth_id = ?`, authID).Scan(ctx, &merchant)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errAuthNotFound()
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	cmd := &ledger.Func[HoldResult]{
		Merchant: merchant,
		Want:     func(tx *ledger.Tx) { wantAuth(tx, authID) },
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*HoldResult, error) {
			a, err := batchOf.Of(tx).authOf(tx, m.ID, authID)
			if err != nil {
				return nil, err
			}
			if err := cards.Load(tx, []string{a.row.CardNo}); err != nil {
				return nil, err
			}
			return fn(tx, m, a)
		},
	}
	return ledger.Do(ctx, s.l, idem, map[string]any{"op": op, "req": content}, cmd)
}

// wantAuth names an authorization a command will read (Command.Prefetch).
func wantAuth(tx *ledger.Tx, authID string) {
	b := batchOf.Of(tx)
	b.wantAuths = append(b.wantAuths, authID)
}

func errHoldClosed(a *authRow) error {
	return postings.ReasonErrorf(postings.ESTATE, postings.ReasonAuthorizationClosed, "the authorization is %s", a.Status)
}

// holdOf is the arithmetic of an authorization's hold as it was approved:
// its amounts and the rate of the authorization (docs/network.md).
func holdOf(r *authRow) (postings.Hold, error) {
	h := postings.Hold{TxnAmount: r.TxnAmount, Amount: r.Amount, Fee: r.Fee}
	var err error
	if h.Txn, err = postings.LookupCurrency(r.TxnCurrency); err != nil {
		return h, ledger.Invariantf("authorization %s has currency %q", r.AuthID, r.TxnCurrency)
	}
	if h.Card, err = postings.LookupCurrency(r.Currency); err != nil {
		return h, ledger.Invariantf("authorization %s has currency %q", r.AuthID, r.Currency)
	}
	if r.TxnCurrency != r.Currency {
		if h.Rate, err = postings.ParseRate(r.FXRate.String); err != nil {
			return h, ledger.Invariantf("authorization %s has rate %q", r.AuthID, r.FXRate.String)
		}
	}
	return h, nil
}

// releaseHold moves amount from the card's hold back to its available
// balance, or to the funding account when the card is cancelled, repaying
// any receivable first.
func releaseHold(tx *ledger.Tx, m *ledger.Merchant, c *cards.BatchCard, r *authRow, amount int64, kind postings.Kind) error {
	ps, err := cards.Credit(tx, c, cards.HeldAccount(r.MerchantID, r.Currency, r.CardNo), amount)
	if err != nil {
		return err
	}
	_, err = tx.Post(postings.Entry{Merchant: m.ID, Kind: kind,
		Refs: postings.Refs{CardNo: r.CardNo, AuthID: r.AuthID}, Postings: ps})
	return err
}

// finishHold completes a hold result with the card's balance after it and
// emits its event.
func finishHold(tx *ledger.Tx, m *ledger.Merchant, a *authState, res *HoldResult, eventType string) (*HoldResult, error) {
	r := &a.row
	var err error
	if res.Available, err = tx.PeekBalance(cards.AvailableAccount(r.MerchantID, r.Currency, r.CardNo)); err != nil {
		return nil, err
	}
	res.Status, res.Held = r.Status, r.Held
	return res, tx.Emit(m.ID, ledger.Event{Type: eventType, Subject: r.CardNo, Data: holdEventData(res)})
}

func holdEventData(r *HoldResult) map[string]any {
	return map[string]any{
		"authId": r.AuthID, "cardNo": r.CardNo, "status": r.Status, "currency": r.Currency,
		"captured": money(r.Captured, r.Currency), "fee": money(r.Fee, r.Currency),
		"released": money(r.Released, r.Currency), "receivable": money(r.Receivable, r.Currency),
		"held": money(r.Held, r.Currency), "available": money(r.Available, r.Currency),
		"createdAt": r.CreatedAt.UTC().Format(time.RFC3339),
	}
}
