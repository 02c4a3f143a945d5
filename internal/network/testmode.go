package network

import (
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Test mode's magic amounts (docs/api.md, "The sandbox", "Magic amounts"):
// an authorization of a test merchant's card whose transaction amount is
// one of these is declined with that code, through the one path every
// decline takes (attempt, event, callback), so that a merchant's developer
// can see each decline its integration must handle. The amount is the code
// read as hundredths: 0.05, 0.14, 0.51, 0.54, 0.61 in a currency with two
// decimals or more (0.051 is not 0.05 in a three-decimal one: the value,
// not the digits, is magic), and 5, 14, 51, 54, 61 whole units in a
// currency without them (JPY). Cards are issued by the gateway, so a
// merchant cannot pick a Stripe-style magic card number: amounts are what
// it chooses. A live merchant's amounts are never magic.
var magicDeclines = []struct{ code, reason string }{
	{RespDoNotHonour, "do not honour"},
	{RespUnknownCard, "invalid card"},
	{RespInsufficient, "insufficient available balance"},
	{RespExpired, "card expired"},
	{RespOverLimit, "exceeds the single authorization limit"},
}

// MagicDeclineSuffix ends the reason of a decline forced by a magic amount,
// so that its attempt and callback tell it from a real one.
const MagicDeclineSuffix = " (test mode: magic amount)"

// MagicDecline returns the decline code and reason a magic amount forces on
// a test merchant's authorization, ok false when minor in currency is not
// magic (or the currency is unknown).
func MagicDecline(minor int64, currency string) (code, reason string, ok bool) {
	cur, err := postings.LookupCurrency(currency)
	if err != nil {
		return "", "", false
	}
	scale := int64(1)
	for e := cur.Exponent; e > 2; e-- {
		scale *= 10
	}
	if minor%scale != 0 {
		return "", "", false
	}
	for _, d := range magicDeclines {
		if minor/scale == int64(d.code[0]-'0')*10+int64(d.code[1]-'0') {
			return d.code, d.reason + MagicDeclineSuffix, true
		}
	}
	return "", "", false
}

// IsTestMerchant reads the merchant's test flag, set at creation and never
// changed (sql/0013_sandbox.sql). It is read only for a magic amount, so
// that other authorizations pay nothing for test mode.
func IsTestMerchant(tx *ledger.Tx, id int64) (bool, error) {
	m, err := merchant.Brief1(tx.Context(), tx.DB(), id)
	return m.Test, ledger.MapError(err)
}
