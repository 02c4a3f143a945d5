package remittance

import (
	"context"
	"fmt"
	"strconv"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// CreateRemittance records a remittance in SUBMITTED and, in the same
// transaction, debits the funding account of its currency: REMIT_OUT (the
// amount, to remittance in flight) and FEE (the fee, to fee revenue).
// Errors: EFORBIDDEN "currency", ELIMIT "remittance_max", EINSUFFICIENT,
// ECONFLICT (idempotency).
func (s *Service) CreateRemittance(ctx context.Context, merchant int64, in RemittanceInput, idem *ledger.Idempotency) (*Remittance, error) {
	if in.Amount <= 0 || in.Amount > postings.AmountMinorMax || in.Fee < 0 || in.Fee > postings.AmountMinorMax {
		return nil, postings.FieldErrorf("amount", "must be greater than zero and at most the maximum amount")
	}
	cmd := &ledger.Func[Remittance]{
		Merchant: merchant,
		Want:     func(tx *ledger.Tx) { tx.WantAccount(cards.FundingAccount(merchant, in.Currency)) },
		Run: func(tx *ledger.Tx, m *ledger.Merchant) (*Remittance, error) {
			return create(tx, m, in, s.cell)
		},
	}
	return ledger.Do(ctx, s.l, idem, in, cmd)
}

// create mints the remittance's id in cell ("" without cells: exactly as
// before cells, rmt_ and 20 random characters).
func create(tx *ledger.Tx, m *ledger.Merchant, in RemittanceInput, cell string) (*Remittance, error) {
	if !m.HasCurrency(in.Currency) {
		return nil, postings.ReasonErrorf(postings.EFORBIDDEN, postings.ReasonCurrency, "%s is not one of the merchant's currencies", in.Currency)
	}
	lim, err := cards.LimitOf(tx, m, in.Currency)
	if err != nil {
		return nil, err
	}
	if in.Amount > lim.RemittanceMax {
		cur := postings.MustCurrency(in.Currency)
		return nil, postings.ReasonErrorf(postings.ELIMIT, postings.ReasonRemittanceMax,
			"the amount exceeds the largest remittance of the merchant's KYB tier, %s %s", postings.FormatMinor(lim.RemittanceMax, cur), cur.Code)
	}
	fund := cards.FundingAccount(m.ID, in.Currency)
	// Amount and fee are two entries: check them together, so that the
	// refusal tells the balance the merchant has, not the one left between
	// them (the entries check again as they post).
	bal, err := tx.Balance(fund)
	if err != nil {
		return nil, err
	}
	if need := in.Amount + in.Fee; need > bal { // both at most AmountMinorMax: no overflow
		cur := postings.MustCurrency(in.Currency)
		return nil, &postings.Error{Code: postings.EINSUFFICIENT, Reason: postings.InsufficientReason(postings.AccountFunding),
			Message: fmt.Sprintf("insufficient funds: the funding account balance is %s %s, the remittance needs %s %s (amount plus fee)",
				postings.FormatMinor(bal, cur), cur.Code, postings.FormatMinor(need, cur), cur.Code)}
	}
	now := tx.Now()
	s := batchOf.Of(tx).add(tx, remitRow{
		TxID: database.CellID(RemitPrefix, cell), MerchantID: m.ID, PayerID: in.PayerID, Beneficiary: in.Beneficiary,
		Amount: in.Amount, Fee: in.Fee, Currency: in.Currency, Purpose: database.NullString(in.Purpose), Rail: in.Rail,
		Status: RemitSubmitted, CallbackURL: database.NullString(in.CallbackURL),
		NextActionAt: bun.NullTime{Time: now}, CreatedAt: now, UpdatedAt: now,
	})
	refs := postings.Refs{TxID: s.row.TxID}
	out, err := tx.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindRemitOut, Refs: refs, Postings: []postings.Posting{{
		Source: fund, Destination: postings.MerchantAccount(m.ID, postings.AccountRemitInFlight, in.Currency),
		Amount: in.Amount, Currency: in.Currency}}})
	if err != nil {
		return nil, err
	}
	if in.Fee > 0 {
		// The fee names the debit it belongs to: its bill line's relatedTo
		// (postings.MetaFeeFor, docs/finance.md).
		meta := map[string]string{"fee": "remittance", postings.MetaFeeFor: strconv.FormatInt(out.Seq, 10)}
		if f := in.FeeFact; f != nil {
			if f.Amount != in.Fee {
				return nil, postings.Errorf(postings.EINTERNAL, "remittance fee %d, its rule says %d", in.Fee, f.Amount)
			}
			meta = postings.PutFacts(meta, nil, f)
		}
		if _, err := tx.Post(postings.Entry{Merchant: m.ID, Kind: postings.KindFee, Refs: refs,
			Metadata: meta, Postings: []postings.Posting{{
				Source: fund, Destination: postings.MerchantAccount(m.ID, postings.AccountFeeRevenue, in.Currency),
				Amount: in.Fee, Currency: in.Currency}}}); err != nil {
			return nil, err
		}
	}
	return remitView(&s.row, []RemittanceStep{{Status: RemitSubmitted, At: now}}), nil
}

func remitView(r *remitRow, history []RemittanceStep) *Remittance {
	out := &Remittance{
		TxID: r.TxID, MerchantID: r.MerchantID, PayerID: r.PayerID, Beneficiary: r.Beneficiary, Amount: r.Amount,
		Fee: r.Fee, Currency: r.Currency, Purpose: r.Purpose.String, Rail: r.Rail, Status: r.Status,
		Reason: r.Reason.String, CallbackURL: r.CallbackURL.String, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		History: history,
	}
	if !r.SettledAt.IsZero() {
		t := r.SettledAt.Time.UTC()
		out.SettledAt = &t
	}
	return out
}
