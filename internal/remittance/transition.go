package remittance

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// RemittanceTransition is one step of the lifecycle.
type RemittanceTransition struct {
	TxID   string
	From   string // the status the caller saw; the step is skipped if it changed
	To     string
	Reason string // ISO return reason (RETURNED) or why it was rejected
	// NextActionAt is when the worker may take the following step.
	NextActionAt time.Time
}

// TransitionRemittance moves a remittance one step forward, exactly once:
// under the merchant's lock the status must still be From and To must
// follow it. The money moves with it: SETTLED pays the rail (REMIT_SETTLE);
// RETURNED gives the amount back (REMIT_RETURN, the fee is kept: the rail
// did its work); REJECTED gives back the amount and the fee (REMIT_RETURN
// and FEE_REFUND). Each step records a remittance.status event. It returns
// the remittance and whether this call moved it.
func (s *Service) TransitionRemittance(ctx context.Context, merchant int64, t RemittanceTransition, idem *ledger.Idempotency) (*Remittance, bool, error) {
	type result struct {
		Remittance Remittance `json:"remittance"`
		Moved      bool       `json:"moved"`
	}
	cmd := &ledger.Func[result]{
		Merchant: merchant,
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*result, error) {
			b := batchOf.Of(tx)
			r, err := b.remitOf(tx, m.ID, t.TxID)
			if err != nil {
				return nil, err
			}
			if r.row.Status != t.From && t.From != "" {
				return &result{Remittance: *remitView(&r.row, nil)}, nil // someone else moved it
			}
			if !allowedStep(r.row.Status, t.To) {
				return nil, postings.ReasonErrorf(postings.ESTATE, postings.ReasonRemittanceState,
					"a %s remittance cannot become %s", r.row.Status, t.To)
			}
			if err := b.applyStep(tx, m, r, t); err != nil {
				return nil, err
			}
			return &result{Remittance: *remitView(&r.row, nil), Moved: true}, nil
		},
	}
	res, err := ledger.Do(ctx, s.l, idem, map[string]any{"op": "remit", "t": t}, cmd)
	if err != nil {
		return nil, false, err
	}
	return &res.Remittance, res.Moved, nil
}

func allowedStep(from, to string) bool {
	for _, s := range nextStatus[from] {
		if s == to {
			return true
		}
	}
	return false
}

func (b *batch) applyStep(tx *ledger.Tx, merchant *ledger.Merchant, s *remitState, t RemittanceTransition) error {
	r := &s.row
	from := r.Status
	m := merchant.ID
	refs := postings.Refs{TxID: r.TxID}
	inFlight := postings.MerchantAccount(m, postings.AccountRemitInFlight, r.Currency)
	fund := postings.MerchantAccount(m, postings.AccountFunding, r.Currency)
	var entries []postings.Entry
	switch t.To {
	case RemitSettled:
		entries = append(entries, postings.Entry{Merchant: m, Kind: postings.KindRemitSettle, Refs: refs, Postings: []postings.Posting{{
			Source: inFlight, Destination: postings.MerchantAccount(m, postings.AccountRailSettlement, r.Currency),
			Amount: r.Amount, Currency: r.Currency}}})
	case RemitReturned, RemitRejected:
		entries = append(entries, postings.Entry{Merchant: m, Kind: postings.KindRemitReturn, Refs: refs,
			Metadata: map[string]string{"reason": reasonCode(t.Reason)},
			Postings: []postings.Posting{{Source: inFlight, Destination: fund, Amount: r.Amount, Currency: r.Currency}}})
		if t.To == RemitRejected && r.Fee > 0 {
			entries = append(entries, postings.Entry{Merchant: m, Kind: postings.KindFeeRefund, Refs: refs, Postings: []postings.Posting{{
				Source: postings.MerchantAccount(m, postings.AccountFeeRevenue, r.Currency), Destination: fund,
				Amount: r.Fee, Currency: r.Currency}}})
		}
	}
	for _, e := range entries {
		if _, err := tx.Post(e); err != nil {
			return err
		}
	}
	b.step(tx, s, t.To, t.Reason)
	switch t.To {
	case RemitSettled, RemitReturned, RemitRejected:
		r.NextActionAt = bun.NullTime{}
	default:
		r.NextActionAt = bun.NullTime{Time: t.NextActionAt}
	}
	if t.To == RemitSettled {
		r.SettledAt = bun.NullTime{Time: tx.Now()}
	}
	return tx.Emit(m, ledger.Event{Type: EventRemittanceStatus, Subject: r.TxID, CallbackURL: r.CallbackURL.String,
		Data: remitEventData(r, from)})
}

// reasonCode keeps a reason inside the metadata character set.
func reasonCode(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(out) < 64; i++ {
		b := s[i]
		if (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '_' || b == '-' || b == '.' {
			out = append(out, b)
		} else if b == ' ' {
			out = append(out, '_')
		}
	}
	return string(out)
}

// remitEventData is the remittance of spec 2.5 as callbacks carry it, with
// its previous status.
func remitEventData(r *remitRow, previous string) map[string]any {
	cur := postings.MustCurrency(r.Currency)
	d := map[string]any{
		"txId": r.TxID, "status": r.Status, "previousStatus": previous,
		"amount": postings.Money{Minor: r.Amount, Currency: cur}, "currency": r.Currency,
		"fee": postings.Money{Minor: r.Fee, Currency: cur}, "rail": r.Rail,
	}
	if r.Reason.Valid {
		d["reason"] = r.Reason.String
	}
	if !r.SettledAt.IsZero() {
		d["settledAt"] = r.SettledAt.Time.UTC().Format(time.RFC3339)
	}
	return d
}
