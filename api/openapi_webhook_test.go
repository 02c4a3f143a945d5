package api

import (
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
)

// contractWebhooksAndKeys drives the webhook and key endpoints through
// success and failure for the contract test (TestOpenAPIDocument). sh has
// events by now (cards, remittances) and its callback URL set.
func contractWebhooksAndKeys(t *testing.T, c *contract, s *testServer, sh, other shop) {
	t.Helper()
	c.call(&sh, "GET", "/shop/webhook", "").must(t, 200, 200)
	c.call(nil, "GET", "/shop/webhook", "").must(t, 400, 400)
	c.call(&sh, "PUT", "/shop/webhook", `{"callbackUrl":"https://merchant.example.com/paygate/v2"}`, "Idempotency-Key", "oa-hook").must(t, 200, 200)
	c.call(&sh, "PUT", "/shop/webhook", `{"callbackUrl":"https://127.0.0.1/"}`).must(t, 400, 400)
	c.call(&other, "PUT", "/shop/webhook", `{"callbackUrl":null}`).must(t, 200, 200)

	var events struct {
		Total int `json:"total"`
		List  []struct {
			EventID    string `json:"eventId"`
			Status     string `json:"status"`
			Deliveries []struct {
				EndpointID string `json:"endpointId"`
				Status     string `json:"status"`
			} `json:"deliveries"`
		} `json:"list"`
	}
	c.call(&sh, "GET", "/shop/webhook/events?page=1&size=5", "").must(t, 200, 200).into(t, &events)
	if len(events.List) == 0 {
		t.Fatal("no event to replay")
	}
	// Each listed event names its deliveries by endpoint (endpoint one's
	// alone here), and its status is theirs.
	for _, e := range events.List {
		if e.Status != "NOT_SENT" && (len(e.Deliveries) != 1 || e.Deliveries[0].EndpointID == "" || e.Deliveries[0].Status != e.Status) {
			t.Errorf("event %s (%s) lists deliveries %+v", e.EventID, e.Status, e.Deliveries)
		}
	}
	c.call(&sh, "GET", "/shop/webhook/events?status=PENDING&type=card.frozen,card.created&type=remittance.status", "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/webhook/events?status=LOST", "").must(t, 400, 400)
	// Events as a resource: either order, a cursor, one event.
	first := events.List[0].EventID
	c.call(&sh, "GET", "/shop/webhook/events?order=desc&size=2", "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/webhook/events?order=asc&startingAfter="+first, "").must(t, 200, 200)
	c.call(&sh, "GET", "/shop/webhook/events?order=sideways", "").must(t, 400, 400)
	c.call(&sh, "GET", "/shop/webhook/events?startingAfter="+first+"&page=2", "").must(t, 400, 400)
	c.call(&other, "GET", "/shop/webhook/events?startingAfter="+first, "").must(t, 200, codeEventNotFound)
	c.call(&sh, "GET", "/shop/webhook/events/"+first, "").must(t, 200, 200)
	c.call(&other, "GET", "/shop/webhook/events/"+first, "").must(t, 200, codeEventNotFound)

	c.call(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":"`+events.List[len(events.List)-1].EventID+`"}`).must(t, 200, 200)
	c.call(&other, "POST", "/shop/webhook/events/replay", `{"eventId":"`+events.List[0].EventID+`"}`).must(t, 200, codeEventNotFound)
	c.call(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":""}`).must(t, 400, 400)

	now := time.Now().UTC()
	c.call(&sh, "POST", "/shop/webhook/events/replay-failed", `{"from":"`+now.Add(-time.Hour).Format(time.RFC3339)+`","to":"`+
		now.Add(time.Hour).Format(time.RFC3339)+`","limit":10}`).must(t, 200, 200)
	c.call(&sh, "POST", "/shop/webhook/events/replay-failed", `{"from":"2026-01-01T00:00:00Z","to":"2026-03-01T00:00:00Z"}`).must(t, 400, 400)

	// The Standard Webhooks secret: a first roll makes one.
	c.call(&sh, "POST", "/shop/webhook/secret/roll", `{"overlapHours":0}`).must(t, 200, 200)
	c.call(&sh, "POST", "/shop/webhook/secret/roll", `{}`, "Idempotency-Key", "oa-whsec").must(t, 200, 200)
	c.call(&sh, "POST", "/shop/webhook/secret/roll", `{"overlapHours":2}`, "Idempotency-Key", "oa-whsec").must(t, 200, codeIdemConflict)
	c.call(&sh, "POST", "/shop/webhook/secret/roll", `{"overlapHours":169}`).must(t, 400, 400)
	contractWebhookEndpoints(t, c, sh, other)

	// Keys: on a merchant of its own, whose keys the rest does not use.
	k := s.newShop(merchant.Spec{})
	c.call(&k, "GET", "/shop/keys", "").must(t, 200, 200)
	c.call(nil, "GET", "/shop/keys", "", "X-Shop-No", k.creds.ShopNo).must(t, 400, 400)
	c.call(&k, "POST", "/shop/keys/signing/roll", `{"overlapHours":1}`, "Idempotency-Key", "oa-roll").must(t, 200, 200)
	c.call(&k, "POST", "/shop/keys/signing/roll", `{"overlapHours":1}`, "Idempotency-Key", "oa-roll").must(t, 200, 200)
	c.call(&k, "POST", "/shop/keys/signing/roll", `{"overlapHours":2}`, "Idempotency-Key", "oa-roll").must(t, 200, codeIdemConflict)
	c.call(&k, "POST", "/shop/keys/signing/roll", `{"overlapHours":169}`).must(t, 400, 400)
	c.call(&k, "GET", "/shop/keys", "").must(t, 200, 200)
	var roll struct {
		Key *string `json:"key"`
	}
	c.call(&k, "POST", "/shop/keys/public/roll", `{}`).must(t, 200, 200).into(t, &roll)
	c.call(&k, "POST", "/shop/keys/public/roll", `{"overlapHours":-1}`).must(t, 400, 400)
	if roll.Key == nil {
		t.Fatal("no key in the roll's answer")
	}
}
