package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paygate/gateway/api/client"
)

// TestStandardWebhooksEndToEnd: the operator's `webhook secret roll` shows
// a whsec_ secret once, and the real gateway's deliveries then pass the
// reference receiver holding both the private key and that secret, which
// verifies X-Sign and Standard Webhooks alike (a receiver with a wrong
// secret refuses them).
func TestStandardWebhooksEndToEnd(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "true" // the receiver is on the loopback
	s := g.serve()
	m := g.createMerchant("Std hooks shop", "USD")
	g.deposit(m.ShopNo, "USD", "100.00")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()

	var roll struct {
		Secret             string  `json:"secret"`
		PreviousValidUntil *string `json:"previousValidUntil"`
	}
	out := g.mustRun("webhook", "secret", "roll", "--shop-no", m.ShopNo, "--overlap-hours", "0")
	if err := json.Unmarshal([]byte(out), &roll); err != nil || !strings.HasPrefix(roll.Secret, "whsec_") || roll.PreviousValidUntil != nil {
		t.Fatalf("webhook secret roll printed %q: %v", out, err)
	}
	g.mustFail("overlap-hours", "webhook", "secret", "roll", "--shop-no", m.ShopNo, "--overlap-hours", "169")

	rcv := newHookReceiver(t, m.PrivateKey)
	both := client.CallbackHandlerKeys([]string{m.PrivateKey}, client.CallbackOptions{Deduper: noDedupe{},
		WebhookSecrets: []string{roll.Secret}}, func(_ context.Context, e client.CallbackEvent) error {
		rcv.events <- e
		return nil
	})
	rcv.handler.Store(&both)
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
	if got := rcv.next(ctx, t, "a card.frozen verified by both schemes"); got.EventType != "card.frozen" {
		t.Fatalf("received %+v", got)
	}
	if n := rcv.refused(); n != 0 {
		t.Errorf("the receiver refused %d genuine deliveries", n)
	}
}
