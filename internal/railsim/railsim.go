// Package railsim is the simulated payment rail of development and tests:
// it settles remittances after a delay, returns those whose account number
// matches a pattern, or, in manual mode, waits for the operator. It is not
// a production rail: a real partner reports through the rail endpoint.
package railsim

import (
	"context"
	"encoding/json"
	"regexp"
	"time"

	"github.com/paygate/gateway/internal/remittance"
)

var _ remittance.Rail = (*SimulatedRail)(nil)

// SimulatedRail settles every remittance after InFlight, except those whose
// beneficiary account number matches ReturnPattern, which come back with
// ReturnReason. With Manual set it never decides: settle and return come
// from the rail endpoint or `gateway rail settle|return`. A test merchant's
// remittance is always left to its sandbox (POST
// /shop/sandbox/remittance/settle or return): the merchant, not a timer,
// decides what its test sees.
type SimulatedRail struct {
	InFlight      time.Duration
	ReturnPattern *regexp.Regexp
	ReturnReason  string // ISO 20022 return reason, e.g. AC01 (incorrect account number)
	Manual        bool
	Now           func() time.Time
}

// Outcome implements remittance.Rail.
func (s *SimulatedRail) Outcome(_ context.Context, r remittance.DueRemittance) (string, string, time.Time, error) {
	if s.Manual || r.Test {
		return "", "", s.Now().Add(24 * time.Hour), nil
	}
	var b struct {
		AccountNo string `json:"account_no"`
		IBAN      string `json:"iban"`
		Account   string `json:"account_number"`
	}
	_ = json.Unmarshal(r.Beneficiary, &b)
	if s.ReturnPattern != nil {
		for _, a := range []string{b.AccountNo, b.IBAN, b.Account} {
			if a != "" && s.ReturnPattern.MatchString(a) {
				return remittance.RemitReturned, s.ReturnReason, time.Time{}, nil
			}
		}
	}
	return remittance.RemitSettled, "", time.Time{}, nil
}
