package receiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client/receiver/signature"
)

// The reference receiver verifies both schemes: with keys and secrets
// (Options.WebhookSecrets) a callback must pass X-Sign AND Standard
// Webhooks; HandlerStandard takes the Standard Webhooks scheme alone. The
// callbacks are signed as the gateway's sender signs them (both Set
// functions), then altered one way at a time.
func TestHandlerVerifiesStandardWebhooks(t *testing.T) {
	t.Parallel()
	secret, _ := signature.NewSecret()
	other, _ := signature.NewSecret()
	const id = "evt_std_1"
	body := []byte(`{"event_id":"` + id + `","event_type":"card.frozen","created_at":"2025-01-15T09:30:00Z","shopNo":"SH1","sequence":2,"data":{}}`)
	signed := func(edit func(h http.Header)) http.Header {
		h := http.Header{}
		if err := signature.SetHeaders(h, body, testTS, testKey); err != nil {
			t.Fatal(err)
		}
		if err := signature.SetStandardHeaders(h, id, testTS, body, secret); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(h)
		}
		return h
	}
	both := HandlerKeys([]string{testKey}, Options{Now: func() time.Time { return testNow }, WebhookSecrets: []string{secret}}, noop)
	stdOnly := HandlerStandard([]string{other, secret}, Options{Now: func() time.Time { return testNow }}, noop)
	specOnly := HandlerKeys([]string{testKey}, Options{Now: func() time.Time { return testNow }}, noop)
	otherSig, _ := signature.SignStandard(id, testTS, body, other)
	tests := []struct {
		name    string
		h       http.Handler
		header  http.Header
		want    int
		message string
	}{
		{"both schemes, genuine", both, signed(nil), 200, `"code":200`},
		{"standard only, genuine (either secret of a roll)", stdOnly, signed(nil), 200, `"code":200`},
		{"spec only ignores the standard headers", specOnly, signed(func(h http.Header) { h.Del(HeaderWebhookSignature) }), 200, `"code":200`},
		{"both: standard headers missing", both, signed(func(h http.Header) { h.Del(HeaderWebhookSignature) }), 400, "missing webhook-id"},
		{"standard only: no X-Sign needed", stdOnly, signed(func(h http.Header) { h.Del(HeaderSign); h.Del(HeaderSignatures) }), 200, `"code":200`},
		{"both: X-Sign wrong, standard right", both, signed(func(h http.Header) { h.Set(HeaderSign, strings.Repeat("0", 64)); h.Del(HeaderSignatures) }), 401, "bad signature"},
		{"both: standard signed by another secret", both, signed(func(h http.Header) { h.Set(HeaderWebhookSignature, otherSig) }), 401, "bad signature"},
		{"standard: webhook-id is not the event_id", stdOnly, signed(func(h http.Header) {
			sig, _ := signature.SignStandard("evt_other", testTS, body, secret)
			h.Set(HeaderWebhookID, "evt_other")
			h.Set(HeaderWebhookSignature, sig)
		}), 400, "bad payload"},
		{"standard: stale timestamp", stdOnly, signed(func(h http.Header) {
			sig, _ := signature.SignStandard(id, "1736930000", body, secret)
			h.Set(HeaderWebhookTimestamp, "1736930000")
			h.Set(HeaderWebhookSignature, sig)
		}), 401, "stale timestamp"},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(string(body)))
		req.Header = tt.header
		rec := httptest.NewRecorder()
		tt.h.ServeHTTP(rec, req)
		if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.message) {
			t.Errorf("%s: %d %s, want %d %q", tt.name, rec.Code, rec.Body.String(), tt.want, tt.message)
		}
	}
}

func noop(context.Context, Event) error { return nil }
