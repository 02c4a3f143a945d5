package views

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/remittance"
)

// The shapes' branches a handler test reaches only through a full request:
// what is null, what is an empty list, what is masked. Each case is the
// exact JSON the answer's data carries.
func TestShapes(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	status := 500
	attempt := delivery.Attempt{WindowStart: at, Attempt: 1, At: at, DurationMs: 7, HTTPStatus: &status, Outcome: "FAILED"}
	info := delivery.DeliveryInfo{EventID: "evt_1", EventType: "card.created", EventSeq: 3, CreatedAt: at,
		Status: delivery.DeliveryNotSent}
	sent := info
	sent.Status, sent.URL, sent.Attempts = "FAILED", "https://m.example/cb", 1
	event := `"eventId":"evt_1","eventType":"card.created","sequence":3,"createdAt":"2026-03-01T09:00:00Z",`
	attemptJSON := `{"windowStart":"2026-03-01T09:00:00Z","attempt":1,"at":"2026-03-01T09:00:00Z","durationMs":7,` +
		`"httpStatus":500,"error":null,"outcome":"FAILED","nextAttemptAt":null}`
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"webhook without a URL", NewWebhook(""), `{"callbackUrl":null}`},
		{"webhook with a URL", NewWebhook("https://m.example/cb"), `{"callbackUrl":"https://m.example/cb"}`},
		{"a replayed key roll shows no key", NewKeyRoll(&merchant.KeyRoll{Kind: "public", RolledAt: at}),
			`{"kind":"public","key":null,"rolledAt":"2026-03-01T09:00:00Z","previousValidUntil":null}`},
		{"a key roll shows its key once", NewKeyRoll(&merchant.KeyRoll{Kind: "signing", Key: "sk_1", RolledAt: at, PreviousValidUntil: &at}),
			`{"kind":"signing","key":"sk_1","rolledAt":"2026-03-01T09:00:00Z","previousValidUntil":"2026-03-01T09:00:00Z"}`},
		{"an unknown card in the batch", NewBatchItem("tok_1", nil), `{"cardNo":"tok_1","found":false}`},
		{"a known card in the batch", NewBatchItem("tok_1", &cards.Card{Currency: "JPY", Available: 500, Status: "ACTIVE"}),
			`{"cardNo":"tok_1","found":true,"balance":500,"held":0,"currency":"JPY","status":"ACTIVE"}`},
		{"a BIN of no type is VIRTUAL", NewBINs([]cards.BIN{{Bin: "453201", Network: "VISA", Currency: "USD"}}),
			`[{"bin":"453201","cardNetwork":"VISA","brand":"VISA","currency":"USD","type":"VIRTUAL"}]`},
		{"an endpoint of every type", NewEndpoint(&delivery.Endpoint{ID: "we_1", No: 1, Enabled: true, CreatedAt: at}),
			`{"id":"we_1","url":null,"eventTypes":[],"allEvents":true,"enabled":true,"default":true,"description":"",` +
				`"createdAt":"2026-03-01T09:00:00Z","previousSecretValidUntil":null}`},
		{"an event not sent has no delivery", NewEventDetail(&delivery.EventDetail{DeliveryInfo: info, Payload: json.RawMessage(`{}`)}),
			`{` + event + `"status":"NOT_SENT","url":null,"attempts":0,"nextAttemptAt":null,"lastAttemptAt":null,` +
				`"lastHttpStatus":null,"lastError":null,"deliveredAt":null,"data":{},"deliveries":[]}`},
		{"an event of before the endpoints: the default URL's delivery",
			NewEventDetail(&delivery.EventDetail{DeliveryInfo: sent, Payload: json.RawMessage(`{}`), Attempts: []delivery.Attempt{attempt}}),
			`{` + event + `"status":"FAILED","url":"https://m.example/cb","attempts":1,"nextAttemptAt":null,"lastAttemptAt":null,` +
				`"lastHttpStatus":null,"lastError":null,"deliveredAt":null,"data":{},"deliveries":[{"url":"https://m.example/cb",` +
				`"status":"FAILED","attempts":1,"nextAttemptAt":null,"lastAttemptAt":null,"lastHttpStatus":null,"lastError":null,` +
				`"deliveredAt":null,"attemptList":[` + attemptJSON + `]}]}`},
		{"an event's deliveries per endpoint", NewEventDetail(&delivery.EventDetail{DeliveryInfo: sent, Payload: json.RawMessage(`{}`),
			Endpoints: []delivery.EndpointDelivery{{EndpointID: "we_2", URL: "https://b.example", Status: "DELIVERED",
				Progress: delivery.Progress{Attempts: 1, DeliveredAt: &at}, AttemptList: []delivery.Attempt{attempt}}}}).Deliveries,
			`[{"endpointId":"we_2","url":"https://b.example","status":"DELIVERED","attempts":1,"nextAttemptAt":null,` +
				`"lastAttemptAt":null,"lastHttpStatus":null,"lastError":null,"deliveredAt":"2026-03-01T09:00:00Z","attemptList":[` +
				attemptJSON + `]}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// A remittance's beneficiary account shows its last four characters only,
// and a short one none; a stored beneficiary that does not decode is an
// error (a 500), not an empty beneficiary.
func TestRemittanceMasksTheAccount(t *testing.T) {
	for _, tc := range []struct{ account, want string }{
		{"DE89370400440532013000", "****3000"}, {"1234", "****"}, {"", "****"},
	} {
		r := &remittance.Remittance{Currency: "EUR", Beneficiary: json.RawMessage(`{"name":"A","country":"DE","account_no":"` + tc.account + `"}`)}
		v, err := NewRemittance(r)
		if err != nil {
			t.Fatal(err)
		}
		if v.Beneficiary != (Beneficiary{Name: "A", Country: "DE", AccountNo: tc.want}) {
			t.Errorf("%q: beneficiary %+v, want account %q", tc.account, v.Beneficiary, tc.want)
		}
	}
	if _, err := NewRemittance(&remittance.Remittance{Beneficiary: json.RawMessage(`[]`)}); err == nil {
		t.Error("a beneficiary that is not an object was rendered")
	}
}
