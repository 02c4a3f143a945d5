package main

import (
	"errors"
	"testing"

	"github.com/paygate/gateway/api/client"
)

// TestSandboxTestModeEndToEnd drives test mode on the real gateway: a test
// merchant's magic amount is declined with its code, to the callback; its
// test clock moved 8 days ahead expires its open hold before the advance
// answers (and its authorization.expired callback follows) while another
// test merchant's clock stays put; a duration out of bounds is a 400
// naming it; a live merchant has no clock (404, an unknown path).
func TestSandboxTestModeEndToEnd(t *testing.T) {
	t.Parallel()
	g, s, ctx := newCallbackGateway(t)
	tm, other := g.createTestMerchant("Clock shop", "USD", "1000.00"), g.createTestMerchant("Other clock shop", "USD", "1000.00")
	live := g.createMerchant("Live shop", "USD")
	next, _ := receiveCallbacks(ctx, t, g, tm.ShopNo, tm.PrivateKey)
	c, oc, lc := s.shopClient(t, tm.ShopNo, tm.PublicKey), s.shopClient(t, other.ShopNo, other.PublicKey), s.shopClient(t, live.ShopNo, live.PublicKey)
	card, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD", Amount: client.MustDecimal("100.00")})
	if err != nil {
		t.Fatal(err)
	}

	// Magic amounts: each a real decline with its code, to the callback.
	for _, tc := range []struct{ amount, code string }{{"0.51", "51"}, {"0.05", "05"}, {"0.14", "14"}, {"0.54", "54"}, {"0.61", "61"}} {
		d, err := c.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{CardNo: card.CardNo, Amount: client.MustDecimal(tc.amount), Currency: "USD"})
		if err != nil || d.Approved || d.Code != tc.code || d.AuthID != nil {
			t.Fatalf("SandboxAuthorize %s: %+v %v, want declined %s", tc.amount, d, err, tc.code)
		}
		if e := next(client.EventAuthorizationDeclined).(*client.AuthorizationEventData); e.Code != tc.code {
			t.Errorf("authorization.declined of %s: %+v", tc.amount, e)
		}
	}

	// The clock: a hold of 10.00, expired by moving 8 days ahead.
	if clk, err := c.SandboxClock(ctx); err != nil || clk.OffsetSeconds != 0 {
		t.Fatalf("SandboxClock: %+v %v", clk, err)
	}
	d, err := c.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{CardNo: card.CardNo, Amount: client.MustDecimal("10.00"), Currency: "USD"})
	if err != nil || !d.Approved {
		t.Fatalf("SandboxAuthorize 10.00: %+v %v", d, err)
	}
	for _, bad := range []string{"31d", "0s", "7 days", "", "-1h"} {
		_, err := c.SandboxAdvanceClock(ctx, client.SandboxClockAdvanceRequest{Duration: bad})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 400 || ce.Field != "duration" {
			t.Errorf("advance %q: %v, want a 400 naming duration", bad, err)
		}
	}
	clk, err := c.SandboxAdvanceClock(ctx, client.SandboxClockAdvanceRequest{Duration: "8d"}, client.WithIdempotencyKey("clock-8d"))
	if err != nil || clk.OffsetSeconds != 8*86400 {
		t.Fatalf("SandboxAdvanceClock 8d: %+v %v", clk, err)
	}
	// A repeat of the key advances once.
	if again, err := c.SandboxAdvanceClock(ctx, client.SandboxClockAdvanceRequest{Duration: "8d"}, client.WithIdempotencyKey("clock-8d")); err != nil || again.OffsetSeconds != 8*86400 {
		t.Fatalf("repeated advance: %+v %v", again, err)
	}
	// The hold is already expired: reversing it now finds it closed.
	if _, err := c.SandboxReverse(ctx, client.SandboxReverseRequest{AuthID: *d.AuthID}); err == nil {
		t.Errorf("the hold was still open after the clock moved past its expiry")
	}
	if e := next(client.EventAuthorizationExpired).(*client.HoldEventData); e.AuthID != *d.AuthID {
		t.Errorf("authorization.expired: %+v", e)
	}
	if o, err := oc.SandboxClock(ctx); err != nil || o.OffsetSeconds != 0 {
		t.Errorf("another test merchant's clock: %+v %v, want untouched", o, err)
	}
	var ce *client.Error
	if _, err := lc.SandboxClock(ctx); !errors.As(err, &ce) || ce.Status != 404 {
		t.Errorf("a live merchant's clock: %v, want 404", err)
	}
	if _, err := lc.SandboxAdvanceClock(ctx, client.SandboxClockAdvanceRequest{Duration: "1d"}); !errors.As(err, &ce) || ce.Status != 404 {
		t.Errorf("a live merchant's advance: %v, want 404", err)
	}
	g.mustRun("audit", "verify")
}
