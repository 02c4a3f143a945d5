// Package deposit is the operator's deposit with the bank's reference
// (docs/finance.md, "Deposits and the bank statement"): a DEPOSIT entry
// (world → funding) whose txId is the bank's reference of the transfer,
// unique per merchant and currency, told to the merchant in a
// deposit.received callback. The reference is the entry's txId because
// the bill, its CSV and every reader of the journal already show txId:
// no new field, and the reference enters the hash chain with the entry.
//
// ledger.Deposit, without a reference, stays for the demo's seed funding,
// the tools and the tests; the CLI and the console call Service.Deposit.
package deposit

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// BankReferenceMax bounds a bank reference: ISO 20022's end-to-end
// identification (a SEPA or SWIFT reference) is at most 35 characters.
const BankReferenceMax = 35

// EventReceived is the callback of a deposit (docs/callbacks.md).
const EventReceived = "deposit.received"

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

// Result is a deposit as booked (or replayed).
type Result struct {
	Seq           int64     `json:"seq"`
	Kind          string    `json:"kind"`
	BankReference string    `json:"bankReference"`
	CreatedAt     time.Time `json:"createdAt"`
}

// Service books deposits.
type Service struct{ l *ledger.Ledger }

// New is the service on l.
func New(l *ledger.Ledger) *Service { return &Service{l: l} }

// Deposit credits the merchant's funding account in currency with minor
// units from its bank. A reference already booked for the merchant and
// currency is refused (ECONFLICT naming bankReference) unless the call is
// the replay of that deposit under the same idempotency key, which
// answers the first before anything is checked.
func (s *Service) Deposit(ctx context.Context, merchant int64, currency string, minor int64, bankRef string, idem *ledger.Idempotency) (*Result, error) {
	if err := CheckBankReference(bankRef); err != nil {
		return nil, err
	}
	e := postings.Entry{Merchant: merchant, Kind: postings.KindDeposit, Refs: postings.Refs{TxID: bankRef}, Postings: []postings.Posting{{
		Source:      postings.MerchantAccount(merchant, postings.AccountWorld, currency),
		Destination: postings.MerchantAccount(merchant, postings.AccountFunding, currency),
		Amount:      minor, Currency: currency,
	}}}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if idem != nil && idem.Scope == "" {
		c := *idem
		c.Scope = ledger.ScopeLedger
		idem = &c
	}
	content := struct {
		Currency, Ref string
		Minor         int64
	}{currency, bankRef, minor}
	return ledger.Do(ctx, s.l, idem, content, &ledger.Func[Result]{Merchant: merchant,
		Want: func(tx *ledger.Tx) { tx.WantAccount(e.Postings[0].Source); tx.WantAccount(e.Postings[0].Destination) },
		Run:  func(tx *ledger.Tx, m *ledger.Merchant) (*Result, error) { return book(tx, m, e) }})
}

// book checks and posts the deposit under the merchant's head lock: no
// other deposit of the merchant can pass the same check at the same time.
func book(tx *ledger.Tx, m *ledger.Merchant, e postings.Entry) (*Result, error) {
	ps, ref := &e.Postings[0], e.Refs.TxID
	if !m.HasCurrency(ps.Currency) {
		return nil, &postings.Error{Code: postings.EFORBIDDEN, Reason: postings.ReasonCurrency, Field: "currency",
			Message: ps.Currency + " is not one of the merchant's currencies"}
	}
	b := batchOf.Of(tx)
	k := refKey{m.ID, ps.Currency, ref}
	seq, err := b.used(tx, k)
	if err != nil {
		return nil, err
	}
	if seq != 0 {
		return nil, &postings.Error{Code: postings.ECONFLICT, Field: "bankReference",
			Message: "bank reference " + ref + " is already the reference of the " + ps.Currency + " deposit of entry " +
				itoa(seq) + "; a bank transfer is deposited once"}
	}
	rec, err := tx.Post(e)
	if err != nil {
		return nil, err
	}
	b.add(tx, k, rec.Seq)
	cur, _ := postings.LookupCurrency(ps.Currency)
	data := map[string]any{"seq": rec.Seq, "amount": postings.Money{Minor: ps.Amount, Currency: cur}, "currency": ps.Currency,
		"bankReference": ref, "createdAt": rec.CreatedAt.UTC().Format(time.RFC3339)}
	if err := tx.Emit(m.ID, ledger.Event{Type: EventReceived, Subject: "deposit:" + ps.Currency + ":" + ref, Data: data}); err != nil {
		return nil, err
	}
	return &Result{Seq: rec.Seq, Kind: string(rec.Kind), BankReference: ref, CreatedAt: rec.CreatedAt.UTC()}, nil
}

// refKey is one reference of one merchant and currency.
type refKey struct {
	merchant int64
	currency string
	ref      string
}

// batch is the references a batch booked, written by Flush.
type batch struct {
	added map[refKey]int64
	order []refKey
}

var batchOf = ledger.NewState(func() *batch { return &batch{added: map[refKey]int64{}} })

// Domain is what deposits bring to the journal core (internal/domains).
var Domain = ledger.Domain{Name: "deposit", States: []ledger.StateKind{batchOf}, Tables: []string{"deposit_references"},
	Constraints: map[string]*postings.Error{"deposit_references_pkey": {Code: postings.ECONFLICT, Field: "bankReference",
		Message: "the bank reference is already the reference of a deposit in this currency"}}}

// used is the seq of the deposit that carries k, in this batch or
// before; 0 when none.
func (b *batch) used(tx *ledger.Tx, k refKey) (int64, error) {
	if seq, ok := b.added[k]; ok {
		return seq, nil
	}
	var seq int64
	err := tx.DB().NewRaw(`select merchant_seq from deposit_references where merchant_id = ? and currency = ? and bank_reference = ?`,
		k.merchant, k.currency, k.ref).Scan(tx.Context(), &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return seq, ledger.MapError(err)
}

func (b *batch) add(tx *ledger.Tx, k refKey, seq int64) {
	b.added[k] = seq
	b.order = append(b.order, k)
	n := len(b.order)
	tx.Undo(func() { delete(b.added, k); b.order = b.order[:n-1] })
}

// Flush writes the batch's references (ledger.Flusher).
func (b *batch) Flush(p *ledger.Pipeline) {
	if len(b.order) == 0 {
		return
	}
	type refRow struct {
		MerchantID    int64  `bun:"merchant_id"`
		Currency      string `bun:"currency"`
		BankReference string `bun:"bank_reference"`
		MerchantSeq   int64  `bun:"merchant_seq"`
	}
	rows := make([]refRow, len(b.order))
	for i, k := range b.order {
		rows[i] = refRow{k.merchant, k.currency, k.ref, b.added[k]}
	}
	p.BunExec(p.DB().NewInsert().Model(&rows).ModelTableExpr("deposit_references"), nil)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
