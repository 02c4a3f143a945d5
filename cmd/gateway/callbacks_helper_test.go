package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/paygate/gateway/api/client"
)

// receiveCallbacks points the merchant's callback URL at a loopback
// receiver verifying with privateKey, and returns next (it waits for the
// next callback of a type, others skipped, and gives its typed data) and
// the receiver's base URL.
func receiveCallbacks(ctx context.Context, t *testing.T, g *gateway, shopNo, privateKey string) (next func(typ string) any, url string) {
	t.Helper()
	events := make(chan client.CallbackEvent, 64)
	rcv := httptest.NewServer(client.CallbackHandler(privateKey, client.CallbackOptions{}, func(_ context.Context, e client.CallbackEvent) error {
		events <- e
		return nil
	}))
	t.Cleanup(rcv.Close)
	g.mustRun("merchant", "callback-url", "--shop-no", shopNo, "--url", rcv.URL+"/hooks")
	return func(typ string) any {
		t.Helper()
		for {
			select {
			case e := <-events:
				if e.EventType != typ {
					continue
				}
				data, err := client.DecodeEventData(e)
				if err != nil {
					t.Fatalf("callback %s: %v", typ, err)
				}
				return data
			case <-ctx.Done():
				t.Fatalf("no %s callback", typ)
			}
		}
	}, rcv.URL
}

// shopClient is a Go client of s as the merchant of shopNo.
func (s *server) shopClient(t *testing.T, shopNo, publicKey string) *client.Client {
	t.Helper()
	cl, err := client.New(client.Config{BaseURL: s.url(""), ShopNo: shopNo, PublicKey: publicKey, HTTPClient: s.client})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// createTestMerchant makes a test merchant (merchant create --test) of one
// currency holding deposit in it.
func (g *gateway) createTestMerchant(name, currency, deposit string) credentials {
	g.t.Helper()
	out := g.mustRun("merchant", "create", "--name", name, "--currencies", currency, "--test")
	var m credentials
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		g.t.Fatalf("merchant create --test printed %s (%v)", out, err)
	}
	g.deposit(m.ShopNo, currency, deposit)
	return m
}

// newCallbackGateway is a served gateway whose callbacks may go to loopback
// receivers, and a context bounded by commandTimeout.
func newCallbackGateway(t *testing.T) (*gateway, *server, context.Context) {
	t.Helper()
	g := newGateway(t)
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "true"
	s := g.serve()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	t.Cleanup(cancel)
	return g, s, ctx
}
