package main

import (
	"context"
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
