package ledger

import (
	"fmt"

	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/postings"
)

// Post validates e against the batch's balances and appends it to the
// journal: the merchant's next sequence number, the chain hash, the new
// balances and the bill lines. Every posting is checked as it is applied, so
// no constrained account is ever below zero, not even inside an entry; the
// domains' rules on entries (PostChecker, such as the daily card-load
// limit) run first. A refused entry leaves no trace.
func (tx *Tx) Post(e postings.Entry) (*postings.Record, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	h, err := tx.head(e.Merchant)
	if err != nil {
		return nil, err
	}
	m := tx.mark()
	if err := tx.checkPost(&h.merchant, &e); err != nil {
		tx.rollback(m)
		return nil, err
	}
	rec := &postings.Record{Entry: e}
	tx.touchHead(h)
	h.seq++
	rec.Seq = h.seq
	rec.CreatedAt = tx.now
	if rec.CreatedAt.Before(h.ts) {
		rec.CreatedAt = h.ts // never decreasing per merchant, even across clock steps
	}
	for i, p := range e.Postings {
		src, err := tx.account(p.Source)
		if err != nil {
			tx.rollback(m)
			return nil, err
		}
		dst, err := tx.account(p.Destination)
		if err != nil {
			tx.rollback(m)
			return nil, err
		}
		if err := tx.move(src, -p.Amount, rec.Seq); err != nil {
			tx.rollback(m)
			return nil, err
		}
		if err := tx.move(dst, p.Amount, rec.Seq); err != nil {
			tx.rollback(m)
			return nil, err
		}
		for _, side := range []struct {
			a      *acctState
			amount int64
		}{{src, -p.Amount}, {dst, p.Amount}} {
			if !side.a.account.Type.Billable() {
				continue
			}
			h.billSeq++
			tx.bills = append(tx.bills, billLineRow{
				MerchantID: e.Merchant, BillSeq: h.billSeq, MerchantSeq: rec.Seq, PostingIdx: int16(i),
				AccountID: side.a.id, Kind: string(postings.BillLineType(&e, i)), Amount: side.amount, Currency: p.Currency,
				BalanceAfter: side.a.balance, CreatedAt: rec.CreatedAt,
				CardNo: database.NullString(e.Refs.CardNo), TxID: database.NullString(e.Refs.TxID), AuthID: database.NullString(e.Refs.AuthID),
			})
		}
	}
	rec.PrevHash = h.hash
	rec.Hash = postings.ChainHash(h.hash, rec)
	h.hash = rec.Hash
	h.ts = rec.CreatedAt
	tx.entries = append(tx.entries, rec)
	return rec, nil
}

// move changes a balance by delta, refusing to take a constrained account
// below zero.
func (tx *Tx) move(a *acctState, delta int64, seq int64) error {
	next, ok := postings.AddChecked(a.balance, delta)
	if !ok {
		// Never the account's address: it names internal ids (docs/errors.md).
		return postings.Errorf(postings.ELIMIT, "the %s balance would overflow", describeAccount(a.account.Type))
	}
	if next < 0 && a.account.Type.Constrained() {
		return &postings.Error{Code: postings.EINSUFFICIENT, Reason: postings.InsufficientReason(a.account.Type),
			Message: fmt.Sprintf("insufficient funds: the %s balance is %s %s", describeAccount(a.account.Type),
				postings.FormatMinor(a.balance, postings.MustCurrency(a.account.Currency)), a.account.Currency)}
	}
	prevBal, prevSeq, prevTouched := a.balance, a.lastSeq, a.touched
	tx.undo = append(tx.undo, func() { a.balance, a.lastSeq, a.touched = prevBal, prevSeq, prevTouched })
	a.balance, a.lastSeq, a.touched = next, seq, true
	return nil
}

func describeAccount(t postings.AccountType) string {
	switch t {
	case postings.AccountFunding:
		return "funding account"
	case postings.AccountCardAvailable:
		return "card's available"
	case postings.AccountCardHeld:
		return "card's held"
	case postings.AccountRemitInFlight:
		return "remittance in flight"
	}
	return string(t)
}
