package network_test

import (
	"context"
	"testing"

	"github.com/paygate/gateway/internal/audit"
	"github.com/paygate/gateway/postings"
)

// Cross-border fees are FEE lines of their own, naming the movement they
// belong to, and type=FEE sums to fee revenue exactly, per currency, for
// cards of 0, 2 and 3 decimals (JPY, USD, KWD): held, captured (within
// the hold and beyond it), reversed and left open.
func TestFeeLinesSumToFeeRevenue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFXCards(t)
	rates := map[string]string{"USD": "1.0843", "JPY": "162.37", "KWD": "0.33417"}
	for _, cur := range fxCardCurrencies {
		if _, err := f.l.FX.Set(ctx, "EUR", cur, rates[cur], 0); err != nil {
			t.Fatal(err)
		}
	}
	authFees := map[string]int64{} // auth id → the fee the authorization held
	for _, cur := range fxCardCurrencies {
		for i, amount := range []int64{1, 3_33, 1_234_56, 77} {
			a := f.authorize(t, cur, "EUR", amount)
			if a.Fee <= 0 {
				t.Fatalf("authorization %d EUR on the %s card has no fee: %+v", amount, cur, a)
			}
			authFees[a.AuthID] = a.Fee
			switch i {
			case 0:
				f.clear(t, a.AuthID, amount) // exactly
			case 1:
				f.clear(t, a.AuthID, amount+50) // beyond the hold
			case 2:
				f.reverse(t, a.AuthID, amount) // all of it
			} // case 3 stays open
		}
	}
	lines := allBillLines(t, f.l, f.m.ID)
	feeLines := map[string]int64{}
	settleSeq := map[string]int64{} // auth id → its CARD_SETTLE's sequence
	for _, l := range lines {
		if l.Kind == postings.KindCardSettle {
			settleSeq[l.AuthID] = l.MerchantSeq
		}
	}
	authFeeLines := 0
	for _, l := range lines {
		if l.Kind != postings.KindFee {
			continue
		}
		feeLines[l.Currency] += l.Amount
		switch {
		case l.RelatedTo == l.MerchantSeq: // the fee inside the authorization
			if l.AccountType == postings.AccountCardAvailable {
				authFeeLines++
				if -l.Amount != authFees[l.AuthID] {
					t.Errorf("the authorization's FEE line %d, its fee %d", l.Amount, authFees[l.AuthID])
				}
			}
		case l.RelatedTo != settleSeq[l.AuthID] || l.RelatedTo == 0:
			t.Errorf("the clearing's FEE line relates to %d, its capture is %d: %+v", l.RelatedTo, settleSeq[l.AuthID], l)
		}
	}
	if authFeeLines != len(authFees) {
		t.Errorf("%d authorizations with a fee, %d FEE lines of authorizations", len(authFees), authFeeLines)
	}
	revenue, err := audit.New(f.l.Ledger).Balances(ctx, f.m.ID, postings.AccountFeeRevenue)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range revenue {
		if r.Balance == 0 {
			continue
		}
		seen++
		if -feeLines[r.Account.Currency] != r.Balance {
			t.Errorf("%s: type=FEE sums to %d, fee revenue is %d", r.Account.Currency, feeLines[r.Account.Currency], r.Balance)
		}
	}
	if seen != len(fxCardCurrencies) {
		t.Errorf("fee revenue in %d currencies, want %d: %+v", seen, len(fxCardCurrencies), revenue)
	}
	mustVerify(t, f.l)
}
