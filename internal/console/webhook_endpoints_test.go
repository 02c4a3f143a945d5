package console_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/delivery"
)

// The webhook endpoints page lists the merchant's endpoints — endpoint one
// marked as the default URL, another with its event types and enabled
// flag — and no secret, nor another merchant's endpoint.
func TestWebhookEndpointsPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	url := "https://merchant.example.com/two"
	mine, err := f.g.Deliveries.CreateEndpoint(ctx, f.a.ID, delivery.EndpointSpec{URL: &url, EventTypes: &[]string{"card.frozen", "card.created"},
		Enabled: &[]bool{false}[0]})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := f.g.Deliveries.CreateEndpoint(ctx, f.b.ID, delivery.EndpointSpec{URL: &[]string{"https://bolt.example.com/hooks"}[0]})
	if err != nil {
		t.Fatal(err)
	}
	c := f.signedIn(t, "rita.readonly")
	res, err := c.Get(f.url("/webhooks/endpoints"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s", res.StatusCode, page)
	}
	for _, want := range []string{`data-endpoint="` + mine.ID + `"`, url, "card.frozen, card.created", "(default URL)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	for _, never := range []string{theirs.ID, "bolt.example.com", "whsec_", mine.Secret} {
		if strings.Contains(page, never) {
			t.Errorf("the page shows %q", never)
		}
	}
}
