package ledger

import (
	"context"

	"github.com/paygate/gateway/postings"
)

// Batch is a group of entries for one merchant that commit together or not
// at all.
type Batch struct {
	Merchant    int64
	Entries     []postings.Entry
	Idempotency *Idempotency
}

// AppendResult is the outcome of Append.
type AppendResult struct {
	Records  []postings.Record
	Replayed bool // the key was seen before; nothing new was written
}

// BatchEntriesMax bounds the entries of one Append.
const BatchEntriesMax = 64

// Append commits a batch of entries atomically: each is validated, the
// balances it moves are checked (no constrained account below zero), and it
// receives the merchant's next sequence number and chain hash. If any entry
// fails, none is written. Errors: EINVALID (malformed entry), ENOTFOUND
// (unknown merchant), EINSUFFICIENT, ECONFLICT (idempotency key reused with
// another batch), EUNAVAILABLE.
func (l *Ledger) Append(ctx context.Context, b Batch) (*AppendResult, error) {
	if len(b.Entries) == 0 || len(b.Entries) > BatchEntriesMax {
		return nil, postings.Errorf(postings.EINVALID, "a batch has 1 to %d entries", BatchEntriesMax)
	}
	for i := range b.Entries {
		if b.Entries[i].Merchant != b.Merchant {
			return nil, postings.Errorf(postings.EINVALID, "entry %d belongs to merchant %d, not %d", i, b.Entries[i].Merchant, b.Merchant)
		}
		if err := b.Entries[i].Validate(); err != nil {
			return nil, err
		}
	}
	idem := b.Idempotency
	if idem != nil && idem.Scope == "" {
		c := *idem
		c.Scope = ScopeLedger
		idem = &c
	}
	k, err := newIdemKey(b.Merchant, idem, func() [32]byte { return contentFingerprint(b.Entries) })
	if err != nil {
		return nil, err
	}
	v, err := l.w.submit(ctx, &appendCmd{batch: b}, k)
	if err != nil {
		return nil, err
	}
	return v.(*AppendResult), nil
}

type appendCmd struct {
	batch Batch
	// check runs first, against the locked merchant (for instance: is the
	// currency enabled).
	check func(tx *Tx, h *head) error
}

func (c *appendCmd) MerchantID() int64 { return c.batch.Merchant }

func (c *appendCmd) Prefetch(tx *Tx) {
	for _, e := range c.batch.Entries {
		for _, ps := range e.Postings {
			tx.WantAccount(ps.Source)
			tx.WantAccount(ps.Destination)
		}
	}
}

func (c *appendCmd) Execute(tx *Tx) (any, error) {
	if c.check != nil {
		h, err := tx.head(c.batch.Merchant)
		if err != nil {
			return nil, err
		}
		if err := c.check(tx, h); err != nil {
			return nil, err
		}
	}
	res := &AppendResult{Records: make([]postings.Record, 0, len(c.batch.Entries))}
	for _, e := range c.batch.Entries {
		rec, err := tx.Post(e)
		if err != nil {
			return nil, err
		}
		res.Records = append(res.Records, *rec)
	}
	return res, nil
}

// replay returns the records the first call wrote, read back from the
// journal (or from this batch, when the first call is in it).
func (c *appendCmd) replay(tx *Tx, row *idemRow) (any, error) {
	res := &AppendResult{Replayed: true}
	if row.firstSeq == 0 {
		return res, nil
	}
	if row.isNew {
		for _, r := range tx.entries {
			if r.Merchant == row.merchant && r.Seq >= row.firstSeq && r.Seq <= row.lastSeq {
				res.Records = append(res.Records, *r)
			}
		}
		return res, nil
	}
	recs, err := tx.l.readEntries(tx.ctx, tx.idb, row.merchant, row.firstSeq, row.lastSeq, BatchEntriesMax)
	if err != nil {
		return nil, err
	}
	res.Records = recs
	return res, nil
}

// Deposit credits a merchant's funding account from its bank (world), as a
// DEPOSIT entry. The currency must be one of the merchant's.
func (l *Ledger) Deposit(ctx context.Context, merchant int64, currency string, minor int64, idem *Idempotency) (*postings.Record, error) {
	e := postings.Entry{Merchant: merchant, Kind: postings.KindDeposit, Postings: []postings.Posting{{
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
	cmd := &appendCmd{batch: b, check: func(_ *Tx, h *head) error {
		if !h.merchant.HasCurrency(currency) {
			return &postings.Error{Code: postings.EFORBIDDEN, Reason: postings.ReasonCurrency, Field: "currency",
				Message: currency + " is not one of the merchant's currencies"}
		}
		return nil
	}}
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
