package rules

import (
	"github.com/paygate/gateway/postings"
)

// RemittanceFee returns the fee of a remittance of amount minor units of
// currency on corridor c: c.FeeFixed + FeeBps(amount, c.FeeBasisPoints,
// RoundUp). The fee is paid, so its percentage rounds up (the house rule of
// rounding.go). currency must be the corridor's.
func RemittanceFee(c *Corridor, amount int64, currency postings.Currency) (int64, error) {
	if c == nil {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee without a corridor")
	}
	if currency.Code != c.Currency {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee in %s for a %s corridor", currency.Code, c.Currency)
	}
	if amount <= 0 || amount > postings.AmountMinorMax {
		return 0, postings.FieldErrorf("amount", "must lie between 1 and %d minor units", postings.AmountMinorMax)
	}
	if c.FeeFixed < 0 || c.FeeFixed > postings.AmountMinorMax || c.FeeBasisPoints < 0 || c.FeeBasisPoints > postings.BasisPointsMax {
		return 0, postings.Errorf(postings.EINTERNAL, "corridor %s/%s has an invalid fee schedule", c.Country, c.Currency)
	}
	variable, err := postings.FeeBps(amount, c.FeeBasisPoints, postings.RoundUp)
	if err != nil {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee arithmetic failed")
	}
	// Both terms are at most AmountMinorMax (10¹⁸): their sum cannot
	// overflow an int64.
	fee := c.FeeFixed + variable
	if fee > postings.AmountMinorMax {
		return 0, postings.Errorf(postings.EINTERNAL, "remittance fee out of range")
	}
	return fee, nil
}

// RemittanceFeeFact is RemittanceFee with the rule that made it, as the FEE
// entry records it (postings.FeeFact): the corridor, its basis points and
// fixed part, and the amount they apply to.
func RemittanceFeeFact(c *Corridor, amount int64, currency postings.Currency) (postings.FeeFact, error) {
	fee, err := RemittanceFee(c, amount, currency)
	if err != nil {
		return postings.FeeFact{}, err
	}
	return postings.FeeFact{Rule: postings.FeeRuleRemittance, RuleVersion: "corridor:" + c.Country + ":" + c.Currency,
		Basis: amount, Bps: c.FeeBasisPoints, Fixed: c.FeeFixed, Amount: fee}, nil
}
