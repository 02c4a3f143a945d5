package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paygate/gateway/api/client"
)

// TestStandardWebhooksEndToEnd: `merchant create` prints a whsec_ secret
// beside the keys, and the real gateway's deliveries pass the reference
// receiver holding the private key and that secret, which verifies X-Sign
// and Standard Webhooks alike; after the operator's `webhook secret roll`
// (overlap 0) they pass with the new secret.
func TestStandardWebhooksEndToEnd(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "true" // the receiver is on the loopback
	s := g.serve()
	m := g.createMerchant("Std hooks shop", "USD")
	g.deposit(m.ShopNo, "USD", "100.00")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	if !strings.HasPrefix(m.WebhookSecret, "whsec_") {
		t.Fatalf("merchant create printed webhookSecret %q", m.WebhookSecret)
	}

	rcv := newHookReceiver(t, m.PrivateKey)
	verifyBoth := func(secret string) { // the receiver, redeployed with this secret
		h := client.CallbackHandlerKeys([]string{m.PrivateKey}, client.CallbackOptions{Deduper: noDedupe{},
			WebhookSecrets: []string{secret}}, func(_ context.Context, e client.CallbackEvent) error {
			rcv.events <- e
			return nil
		})
		rcv.handler.Store(&h)
	}
	verifyBoth(m.WebhookSecret)
	c, err := client.New(client.Config{BaseURL: s.url(""), ShopNo: m.ShopNo, PublicKey: m.PublicKey, HTTPClient: s.client,
		Retry: client.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetWebhook(ctx, rcv.srv.URL+"/hooks"); err != nil {
		t.Fatal(err)
	}
	card, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD", Amount: client.MustDecimal("10.00")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FreezeCard(ctx, client.FreezeCardRequest{CardNo: card.CardNo}); err != nil {
		t.Fatal(err)
	}
	if got := rcv.next(ctx, t, "a card.frozen verified with the creation's secret"); got.EventType != "card.frozen" {
		t.Fatalf("received %+v", got)
	}

	var roll struct {
		Secret             string  `json:"secret"`
		PreviousValidUntil *string `json:"previousValidUntil"`
	}
	out := g.mustRun("webhook", "secret", "roll", "--shop-no", m.ShopNo, "--overlap-hours", "0")
	if err := json.Unmarshal([]byte(out), &roll); err != nil || !strings.HasPrefix(roll.Secret, "whsec_") ||
		roll.Secret == m.WebhookSecret || roll.PreviousValidUntil != nil {
		t.Fatalf("webhook secret roll printed %q: %v", out, err)
	}
	g.mustFail("overlap-hours", "webhook", "secret", "roll", "--shop-no", m.ShopNo, "--overlap-hours", "169")
	verifyBoth(roll.Secret)
	if err := c.UnfreezeCard(ctx, card.CardNo); err != nil {
		t.Fatal(err)
	}
	if got := rcv.next(ctx, t, "a card.unfrozen verified with the rolled secret"); got.EventType != "card.unfrozen" {
		t.Fatalf("received %+v", got)
	}
	if n := rcv.refused(); n != 0 {
		t.Errorf("the receiver refused %d genuine deliveries", n)
	}

	// The events as a resource, through the client: newest first, then
	// the one event with its delivery and attempts.
	page, err := c.WebhookEvents(ctx, client.WebhookEventsQuery{Order: client.OrderDesc, Types: []string{"card.frozen", "card.unfrozen"}})
	if err != nil || len(page.List) != 2 || page.List[0].EventType != "card.unfrozen" {
		t.Fatalf("WebhookEvents desc: %+v, %v", page, err)
	}
	older, err := c.WebhookEvents(ctx, client.WebhookEventsQuery{Order: client.OrderDesc, StartingAfter: page.List[0].EventID, Size: 1,
		Types: []string{"card.frozen", "card.unfrozen"}})
	if err != nil || len(older.List) != 1 || older.List[0].EventID != page.List[1].EventID {
		t.Fatalf("WebhookEvents after %s: %+v, %v", page.List[0].EventID, older, err)
	}
	ev, err := c.WebhookEvent(ctx, page.List[1].EventID)
	if err != nil || ev.EventType != "card.frozen" || len(ev.Deliveries) != 1 || len(ev.Deliveries[0].AttemptList) == 0 ||
		!strings.Contains(string(ev.Data), ev.EventID) {
		t.Fatalf("WebhookEvent: %+v, %v", ev, err)
	}
	var e *client.Error
	if _, err := c.WebhookEvent(ctx, "evt_nosuchevent"); !errors.As(err, &e) || e.Code != 1301 {
		t.Errorf("an unknown event: %v, want 1301", err)
	}
	sec, err := c.RollWebhookSecret(ctx, client.KeyRollRequest{})
	if err != nil || !strings.HasPrefix(sec.Secret, "whsec_") || sec.PreviousValidUntil == nil {
		t.Errorf("RollWebhookSecret: %+v, %v", sec, err)
	}
}
