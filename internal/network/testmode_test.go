package network_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
)

// TestMagicDeclineAmounts: the magic amounts are the code read as
// hundredths in any currency of two decimals or more, whole units in one
// without decimals; nothing else is magic.
func TestMagicDeclineAmounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		minor    int64
		currency string
		code     string
	}{
		{5, "USD", "05"}, {14, "USD", "14"}, {51, "EUR", "51"}, {54, "USD", "54"}, {61, "GBP", "61"},
		{51, "JPY", "51"}, {610, "BHD", "61"}, {50, "BHD", "05"},
		{52, "USD", ""}, {5100, "USD", ""}, {51, "BHD", ""}, {1, "USD", ""}, {51, "XXX?", ""},
	} {
		code, reason, ok := network.MagicDecline(tc.minor, tc.currency)
		if code != tc.code || ok != (tc.code != "") || (ok && !strings.HasSuffix(reason, network.MagicDeclineSuffix)) {
			t.Errorf("MagicDecline(%d, %s) = %q %q %v, want code %q", tc.minor, tc.currency, code, reason, ok, tc.code)
		}
	}
}

// TestMagicAmountsTestMerchantOnly: a test merchant's authorization of a
// magic amount is declined with its code as a real decline is (the
// attempt kept, nothing held); a live merchant's same amounts are approved.
func TestMagicAmountsTestMerchantOnly(t *testing.T) {
	ctx := context.Background()
	f := newNetworkFixture(t, 100_00) // a live merchant's card
	test, _, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Sandbox", Currencies: []string{"USD"}, Test: true})
	if err != nil {
		t.Fatal(err)
	}
	deposit(t, f.l, test.ID, "USD", 1_000_00)
	testCard, err := f.l.Cards.CreateCard(ctx, test.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"05", "14", "51", "54", "61"} {
		minor, err := strconv.ParseInt(code, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		req := network.AuthRequest{MessageID: f.msg(), CardNo: testCard.CardNo, Amount: minor, Currency: "USD"}
		res, err := f.l.Network.Authorize(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Approved || res.Code != code || !strings.HasSuffix(res.Reason, network.MagicDeclineSuffix) || res.AuthID != "" {
			t.Errorf("test merchant, 0.%s USD: %+v, want declined %s", code, res, code)
		}
		if live := f.authorize(t, minor, "USD"); !live.Approved {
			t.Errorf("live merchant, 0.%s USD: %+v, want approved (a live merchant's amounts are never magic)", code, live)
		}
	}
	attempts, err := f.l.Network.AuthAttempts(ctx, testCard.CardNo, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 5 {
		t.Fatalf("%d attempts recorded, want the 5 declines: %+v", len(attempts), attempts)
	}
	for _, a := range attempts {
		if a.Approved {
			t.Errorf("attempt %+v approved", a)
		}
	}
	// An ordinary amount of the test merchant is decided as always.
	if res, err := f.l.Network.Authorize(ctx, network.AuthRequest{MessageID: f.msg(), CardNo: testCard.CardNo, Amount: 52, Currency: "USD"}); err != nil || !res.Approved {
		t.Fatalf("test merchant, 0.52 USD: %+v %v, want approved", res, err)
	}
	mustVerify(t, f.l)
}
