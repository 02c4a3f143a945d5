package api

import (
	"strings"
	"testing"
)

// contractWebhookEndpoints drives the webhook endpoints through success
// and failure for the contract test (TestOpenAPIDocument), and checks that
// another merchant's endpoint is answered exactly like an unknown one.
func contractWebhookEndpoints(t *testing.T, c *contract, sh, other shop) {
	t.Helper()
	var list struct {
		List []struct {
			ID string `json:"id"`
		} `json:"list"`
	}
	c.call(&sh, "GET", "/shop/webhook/endpoints", "").must(t, 200, 200).into(t, &list)
	if len(list.List) != 1 {
		t.Fatalf("a merchant's endpoints: %+v, want endpoint one alone", list)
	}
	one := list.List[0].ID
	c.call(nil, "GET", "/shop/webhook/endpoints", "", "X-Shop-No", sh.creds.ShopNo).must(t, 400, 400)
	var created struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	c.call(&sh, "POST", "/shop/webhook/endpoints", `{"url":"https://merchant.example.com/two","eventTypes":["card.frozen"],"description":"two"}`,
		"Idempotency-Key", "oa-ep").must(t, 200, 200).into(t, &created)
	if !strings.HasPrefix(created.Secret, "whsec_") {
		t.Errorf("the creation's answer has no secret: %+v", created)
	}
	c.call(&sh, "POST", "/shop/webhook/endpoints", `{"url":"https://merchant.example.com/three"}`, "Idempotency-Key", "oa-ep").must(t, 200, codeIdemConflict)
	c.call(&sh, "POST", "/shop/webhook/endpoints", `{"url":"https://127.0.0.1/"}`).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/webhook/endpoints", `{"url":"https://merchant.example.com/x","eventTypes":["card.melted"]}`).must(t, 400, 400)
	two := "/shop/webhook/endpoints/" + created.ID
	c.call(&sh, "GET", two, "").must(t, 200, 200)
	c.call(&sh, "POST", two, `{"enabled":false,"eventTypes":[]}`).must(t, 200, 200)
	// Endpoint one is disabled and selects types like any endpoint, then
	// takes everything again for the rest of the contract test.
	var ep struct {
		Enabled    bool     `json:"enabled"`
		EventTypes []string `json:"eventTypes"`
	}
	c.call(&sh, "POST", "/shop/webhook/endpoints/"+one, `{"enabled":false,"eventTypes":["card.frozen"]}`).must(t, 200, 200).into(t, &ep)
	if ep.Enabled || len(ep.EventTypes) != 1 {
		t.Errorf("endpoint one disabled for card.frozen: %+v", ep)
	}
	c.call(&sh, "POST", "/shop/webhook/endpoints/"+one, `{"eventTypes":["card.melted"]}`).must(t, 400, 400)
	c.call(&sh, "POST", "/shop/webhook/endpoints/"+one, `{"enabled":true,"eventTypes":[]}`).must(t, 200, 200).into(t, &ep)
	if !ep.Enabled || len(ep.EventTypes) != 0 {
		t.Errorf("endpoint one enabled for every type: %+v", ep)
	}
	c.call(&sh, "POST", "/shop/webhook/endpoints/"+one, `{"url":"https://merchant.example.com/paygate/v3"}`).must(t, 200, 200)
	c.call(&sh, "POST", two+"/secret/roll", `{"overlapHours":1}`).must(t, 200, 200)
	c.call(&sh, "GET", "/shop/webhook/endpoints/we_x", "").must(t, 400, 400)

	// Another merchant's endpoint is an unknown one, byte for byte but the
	// request id.
	unknown := "/shop/webhook/endpoints/we_aaaaaaaaaaaaaaaaaaaaaaaa"
	for _, m := range []struct{ method, suffix, body string }{{"GET", "", ""}, {"POST", "", `{}`}, {"DELETE", "", ""},
		{"POST", "/secret/roll", `{}`}} {
		a := c.call(&other, m.method, two+m.suffix, m.body).must(t, 200, codeEndpointNotFound)
		b := c.call(&other, m.method, unknown+m.suffix, m.body).must(t, 200, codeEndpointNotFound)
		if a.Message != b.Message {
			t.Errorf("%s %s: another merchant's endpoint %q, an unknown one %q", m.method, m.suffix, a.Message, b.Message)
		}
	}
	c.call(&sh, "DELETE", "/shop/webhook/endpoints/"+one, "").must(t, 400, 400)
	c.call(&sh, "DELETE", two, "").must(t, 200, 200)
	c.call(&sh, "GET", two, "").must(t, 200, codeEndpointNotFound)
}
