package adjustment

import (
	"slices"

	"github.com/paygate/gateway/postings"
)

// ProposeInput is a proposal as the CLI and the console take it.
type ProposeInput struct {
	Merchant int64
	// Reverses is the merchant's entry to reverse (its seq); 0 for a free
	// adjustment.
	Reverses int64
	// A free adjustment: the house account, the direction, the amount in
	// minor units of Currency.
	House     string
	Direction string
	Amount    int64
	Currency  string
	Reason    string
	Reference string
}

// check validates the input at the door, naming the field at fault.
func (in *ProposeInput) check() error {
	if err := checkText("reason", in.Reason, reasonMin, reasonMax); err != nil {
		return err
	}
	if err := checkText("reference", in.Reference, referenceMin, referenceMax); err != nil {
		return err
	}
	if in.Reverses != 0 {
		if in.Reverses < 0 {
			return postings.FieldErrorf("reverses", "must be an entry's seq, 1 or more")
		}
		if in.House != "" || in.Direction != "" || in.Amount != 0 || in.Currency != "" {
			return postings.FieldErrorf("reverses", "a reversal takes its postings from the entry: no account, direction or amount")
		}
		return nil
	}
	if !slices.Contains(HouseAccounts, postings.AccountType(in.House)) {
		return postings.FieldErrorf("houseAccount", "must be world or fee_revenue")
	}
	if in.Direction != DirectionCredit && in.Direction != DirectionDebit {
		return postings.FieldErrorf("direction", "must be credit (house → funding) or debit (funding → house)")
	}
	if _, err := postings.LookupCurrency(in.Currency); err != nil {
		return postings.WithField(err, "currency")
	}
	if in.Amount <= 0 || in.Amount > postings.AmountMinorMax {
		return postings.FieldErrorf("amount", "must be more than zero and at most the journal's bound")
	}
	return nil
}
