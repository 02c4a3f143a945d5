package ledger

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/paygate/gateway/postings"
)

// Deposits (docs/finance.md, "Deposits and the bank statement"). A deposit
// credits a merchant's funding account from its bank (world → funding) as
// a DEPOSIT entry. The operator's doors (the CLI's merchant deposit, the
// console's deposit form) require the bank's reference of the transfer and
// call DepositRef; Deposit, without one, is for the demo's seed funding,
// the tools and the tests.
//
// The bank reference is the entry's txId (Refs.TxID): the bill, its CSV
// and the statement already show txId for every line, the reference then
// enters the hash chain with the entry, and no new column, field or
// encoding is needed. It is unique per merchant and currency: a second
// deposit naming it is refused (ECONFLICT, field bankReference) unless it
// is the replay of the first under the same idempotency key, which answers
// before the check runs.

// BankReferenceMax bounds a bank reference: ISO 20022's end-to-end
// identification (a SEPA or SWIFT reference) is at most 35 characters.
const BankReferenceMax = 35

// EventDepositReceived is the callback of a deposit (docs/callbacks.md).
const EventDepositReceived = "deposit.received"

// CheckBankReference validates a bank reference at the door: 1 to 35
// characters of [A-Za-z0-9_.:-] (the journal's reference alphabet, so that
// it is the entry's txId as typed; a bank's "/" or space is written "-").
func CheckBankReference(ref string) error {
	switch {
	case ref == "":
		return postings.FieldErrorf("bankReference", "required: the bank's reference of the transfer")
	case len(ref) > BankReferenceMax || !postings.IsRefText(ref):
		return postings.FieldErrorf("bankReference", "must be 1 to %d characters of [A-Za-z0-9_.:-] (write a bank's / or space as -)",
			BankReferenceMax)
	}
	return nil
}

// Deposit credits a merchant's funding account from its bank (world), as a
// DEPOSIT entry without a bank reference. The currency must be one of the
// merchant's.
func (l *Ledger) Deposit(ctx context.Context, merchant int64, currency string, minor int64, idem *Idempotency) (*postings.Record, error) {
	return l.deposit(ctx, merchant, currency, minor, "", idem)
}

// DepositRef is Deposit with the bank's reference of the transfer,
// required and unique per merchant and currency.
func (l *Ledger) DepositRef(ctx context.Context, merchant int64, currency string, minor int64, bankRef string, idem *Idempotency) (*postings.Record, error) {
	if err := CheckBankReference(bankRef); err != nil {
		return nil, err
	}
	return l.deposit(ctx, merchant, currency, minor, bankRef, idem)
}

func (l *Ledger) deposit(ctx context.Context, merchant int64, currency string, minor int64, bankRef string, idem *Idempotency) (*postings.Record, error) {
	e := postings.Entry{Merchant: merchant, Kind: postings.KindDeposit, Refs: postings.Refs{TxID: bankRef}, Postings: []postings.Posting{{
		Source:      postings.MerchantAccount(merchant, postings.AccountWorld, currency),
		Destination: postings.MerchantAccount(merchant, postings.AccountFunding, currency),
		Amount:      minor, Currency: currency,
	}}}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	b := Batch{Merchant: merchant, Entries: []postings.Entry{e}, Idempotency: idem}
	if idem != nil && idem.Scope == "" {
		c := *idem
		c.Scope = ScopeLedger
		b.Idempotency = &c
	}
	k, err := newIdemKey(merchant, b.Idempotency, func() [32]byte { return contentFingerprint(b.Entries) })
	if err != nil {
		return nil, err
	}
	cmd := &appendCmd{batch: b, check: func(tx *Tx, h *head) error {
		if !h.merchant.HasCurrency(currency) {
			return &postings.Error{Code: postings.EFORBIDDEN, Reason: postings.ReasonCurrency, Field: "currency",
				Message: currency + " is not one of the merchant's currencies"}
		}
		if bankRef == "" {
			return nil
		}
		return checkBankReferenceUnused(tx, merchant, currency, bankRef)
	}}
	if bankRef != "" {
		cmd.after = func(tx *Tx, rec *postings.Record) error {
			return tx.Emit(merchant, Event{Type: EventDepositReceived, Subject: "deposit:" + currency + ":" + bankRef,
				Data: depositEventData(rec, minor, currency, bankRef)})
		}
	}
	v, err := l.w.submit(ctx, cmd, k)
	if err != nil {
		return nil, err
	}
	res := v.(*AppendResult)
	if len(res.Records) == 0 {
		return nil, postings.Errorf(postings.EINTERNAL, "deposit replay without its entry")
	}
	return &res.Records[0], nil
}

// checkBankReferenceUnused refuses a bank reference that a DEPOSIT of the
// merchant in the currency already carries: in this batch (not yet
// written) or in the journal. The merchant's head is locked, so no other
// deposit of the merchant can pass the same check at the same time.
func checkBankReferenceUnused(tx *Tx, merchant int64, currency, ref string) error {
	for _, r := range tx.Entries() {
		if r.Merchant == merchant && r.Kind == postings.KindDeposit && r.Refs.TxID == ref && r.Postings[0].Currency == currency {
			return bankReferenceUsed(ref, currency, r.Seq)
		}
	}
	var seq int64
	err := tx.DB().NewRaw(`select e.merchant_seq from entries e
		join postings p on p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq and p.idx = 0
		where e.merchant_id = ? and e.kind = 'DEPOSIT' and e.tx_id = ? and p.currency = ? limit 1`,
		merchant, ref, currency).Scan(tx.Context(), &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return mapError(err)
	}
	return bankReferenceUsed(ref, currency, seq)
}

func bankReferenceUsed(ref, currency string, seq int64) error {
	return &postings.Error{Code: postings.ECONFLICT, Field: "bankReference",
		Message: "bank reference " + ref + " is already the reference of the " + currency + " deposit of entry " +
			strconv.FormatInt(seq, 10) + "; a bank transfer is deposited once"}
}

// depositEventData is the deposit.received callback's object: amounts as
// exact decimals in the currency.
func depositEventData(rec *postings.Record, minor int64, currency, ref string) map[string]any {
	cur, _ := postings.LookupCurrency(currency)
	return map[string]any{"seq": rec.Seq, "amount": postings.Money{Minor: minor, Currency: cur}, "currency": currency,
		"bankReference": ref, "createdAt": rec.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00")}
}
