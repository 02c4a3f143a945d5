package api

// The webhook and key routes' handlers against fakes (fakes_test.go).

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
)

func TestHandleWebhookSettings(t *testing.T) {
	t.Parallel()
	runShopCases(t, http.MethodGet, "/shop/webhook", []handlerCase{{name: "none set", data: `{"callbackUrl":null}`}})
	ok := `{"callbackUrl":"https://merchant.example.com/hooks"}`
	cases := []handlerCase{
		{name: "set", body: ok, call: "SetCallbackURL", in: "https://merchant.example.com/hooks",
			data: `{"callbackUrl":"https://merchant.example.com/hooks"}`},
		{name: "cleared by null", body: `{"callbackUrl":null}`, call: "SetCallbackURL", in: "", data: `{"callbackUrl":null}`},
		{name: "cleared by absence", body: `{}`, call: "SetCallbackURL", in: ""},
		{name: "bad JSON", body: `{"callbackUrl"`, field: "body"},
		{name: "not a string", body: `{"callbackUrl":1}`, field: "callbackUrl"},
		{name: "loopback", body: `{"callbackUrl":"http://localhost/hooks"}`, field: "callbackUrl"},
		{name: "not a URL", body: `{"callbackUrl":"hooks"}`, field: "callbackUrl"},
		{name: "unknown field", body: `{"url":"https://merchant.example.com/hooks"}`, field: "url"},
		// Naturally idempotent: a key is held like a read's.
		{name: "key reused", body: ok, headers: []string{headerIdempotencyKey, "k1"}, err: mapIdemMismatch.err,
			code: codeIdemConflict, message: mapIdemMismatch.message},
	}
	runShopCases(t, http.MethodPut, "/shop/webhook", withErrors(cases, handlerCase{body: ok, call: "SetCallbackURL"}))
}

func TestHandleWebhookEvents(t *testing.T) {
	t.Parallel()
	asc := func(q delivery.EventQuery) delivery.EventQuery {
		if q.Order == "" {
			q.Order = delivery.OrderAsc
		}
		if q.Page == 0 && q.StartingAfter == "" {
			q.Page = 1
		}
		if q.StartingAfter != "" {
			q.Page = 1 // the default, ignored with a cursor
		}
		if q.Size == 0 {
			q.Size = eventsSizeDefault
		}
		return q
	}
	cases := []handlerCase{
		{name: "defaults: oldest first, page 1", call: "ListEvents", in: asc(delivery.EventQuery{}), data: `{"total":0,"list":[]}`},
		{name: "filtered", query: "?status=FAILED&type=card.created,remittance.status&type=card.frozen&page=2&size=5", call: "ListEvents",
			in: asc(delivery.EventQuery{Filter: delivery.EventFilter{Status: delivery.DeliveryFailed,
				Types: []string{"card.created", "remittance.status", "card.frozen"}}, Page: 2, Size: 5})},
		{name: "newest first", query: "?order=desc", call: "ListEvents", in: asc(delivery.EventQuery{Order: delivery.OrderDesc})},
		{name: "oldest first, said", query: "?order=asc&size=3", call: "ListEvents", in: asc(delivery.EventQuery{Size: 3})},
		{name: "a cursor", query: "?startingAfter=evt_1&order=desc", call: "ListEvents",
			in: asc(delivery.EventQuery{StartingAfter: "evt_1", Order: delivery.OrderDesc})},
		{name: "bad status", query: "?status=failed", field: "status"},
		{name: "bad type", query: "?type=Card.Created", field: "type"},
		{name: "page 0", query: "?page=0", field: "page"},
		{name: "size too big", query: "?size=100000", field: "size"},
		{name: "order upper case", query: "?order=DESC", field: "order"},
		{name: "order unknown", query: "?order=newest", field: "order"},
		{name: "order twice", query: "?order=asc&order=desc", field: "order"},
		{name: "cursor empty", query: "?startingAfter=", field: "startingAfter"},
		{name: "cursor with a space", query: "?startingAfter=evt%201", field: "startingAfter"},
		{name: "cursor too long", query: "?startingAfter=" + strings.Repeat("e", 65), field: "startingAfter"},
		{name: "cursor and page", query: "?startingAfter=evt_1&page=2", field: "page"},
	}
	// An unknown cursor, like another merchant's event, is 1301.
	runShopCases(t, http.MethodGet, "/shop/webhook/events", withErrors(cases, handlerCase{call: "ListEvents"}, mapEventNotFound))
}

func TestHandleWebhookEvent(t *testing.T) {
	t.Parallel()
	cases := []handlerCase{
		{name: "one event, never sent", call: "EventDetail", in: "evt_1",
			data: `{"eventId":"evt_1","eventType":"card.frozen","sequence":2,"createdAt":"` + fakeAt.Format(time.RFC3339) + `",` +
				`"status":"NOT_SENT","url":null,"attempts":0,"nextAttemptAt":null,"lastAttemptAt":null,"lastHttpStatus":null,` +
				`"lastError":null,"deliveredAt":null,"data":{"event_id":"evt_1"},"deliveries":[]}`},
	}
	// Another merchant's event is an unknown one (1301).
	runShopCases(t, http.MethodGet, "/shop/webhook/events/evt_1", withErrors(cases, handlerCase{call: "EventDetail"}, mapEventNotFound))
	runShopCases(t, http.MethodGet, "/shop/webhook/events/"+strings.Repeat("e", 65), []handlerCase{{name: "id too long", field: "eventId"}})
}

func TestHandleWebhookSecretRoll(t *testing.T) {
	t.Parallel()
	cases := []handlerCase{
		{name: "default overlap", body: `{}`, call: "RollWebhookSecret", in: merchant.KeyOverlapDefault,
			data: `{"secret":"whsec_next","rolledAt":"` + fakeAt.Format(time.RFC3339) + `","previousValidUntil":null}`},
		{name: "no overlap", body: `{"overlapHours":0}`, call: "RollWebhookSecret", in: time.Duration(0)},
		{name: "a week", body: `{"overlapHours":168}`, call: "RollWebhookSecret", in: 168 * time.Hour},
		{name: "too long", body: `{"overlapHours":169}`, field: "overlapHours"},
		{name: "negative", body: `{"overlapHours":-1}`, field: "overlapHours"},
		{name: "a fraction", body: `{"overlapHours":1.5}`, field: "overlapHours"},
		{name: "unknown field", body: `{"secret":"whsec_mine"}`, field: "secret"},
		{name: "key reused", body: `{}`, headers: []string{headerIdempotencyKey, "k1"}, err: mapIdemMismatch.err,
			code: codeIdemConflict, message: mapIdemMismatch.message},
	}
	runShopCases(t, http.MethodPost, "/shop/webhook/secret/roll", withErrors(cases, handlerCase{body: `{}`, call: "RollWebhookSecret"}))
}

func TestHandleWebhookReplay(t *testing.T) {
	t.Parallel()
	ok := `{"eventId":"evt_1"}`
	cases := []handlerCase{
		{name: "replayed", body: ok, call: "ReplayEvent", in: "evt_1"},
		{name: "bad JSON", body: `{"eventId":}`, field: "body"},
		{name: "no eventId", body: `{}`, field: "eventId"},
		{name: "eventId with a space", body: `{"eventId":"evt 1"}`, field: "eventId"},
		{name: "key reused", body: ok, headers: []string{headerIdempotencyKey, "k1"}, err: mapIdemMismatch.err,
			code: codeIdemConflict, message: mapIdemMismatch.message},
	}
	// Another merchant's event is an unknown one (1301).
	runShopCases(t, http.MethodPost, "/shop/webhook/events/replay", withErrors(cases, handlerCase{body: ok, call: "ReplayEvent"},
		mapEventNotFound))

	from, to := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	okRange := `{"from":"2026-11-25T00:00:00Z","to":"2026-11-26T00:00:00Z"}`
	failed := []handlerCase{
		{name: "replayed", body: okRange, call: "ReplayFailed", in: delivery.FailedRange{From: from, To: to, Limit: delivery.ReplayFailedDefault},
			data: `{"replayed":0,"more":false}`},
		{name: "with a limit", body: `{"from":"2026-11-25T00:00:00Z","to":"2026-11-26T00:00:00Z","limit":7}`, call: "ReplayFailed",
			in: delivery.FailedRange{From: from, To: to, Limit: 7}},
		{name: "no to", body: `{"from":"2026-11-25T00:00:00Z"}`, field: "to"},
		{name: "a date, not a time", body: `{"from":"2026-11-25","to":"2026-11-26T00:00:00Z"}`, field: "from"},
		{name: "reversed", body: `{"from":"2026-11-26T00:00:00Z","to":"2026-11-25T00:00:00Z"}`, field: "to"},
		{name: "limit 0", body: `{"from":"2026-11-25T00:00:00Z","to":"2026-11-26T00:00:00Z","limit":0}`, field: "limit"},
		{name: "limit a fraction", body: `{"from":"2026-11-25T00:00:00Z","to":"2026-11-26T00:00:00Z","limit":1.5}`, field: "limit"},
	}
	runShopCases(t, http.MethodPost, "/shop/webhook/events/replay-failed", withErrors(failed, handlerCase{body: okRange, call: "ReplayFailed"}))
}

func TestHandleKeys(t *testing.T) {
	t.Parallel()
	runShopCases(t, http.MethodGet, "/shop/keys", withErrors([]handlerCase{
		{name: "no overlap", call: "KeyState", data: `{"publicKey":{"previousValidUntil":null},"signingKey":{"previousValidUntil":null}}`},
	}, handlerCase{call: "KeyState"}))
	for _, r := range []struct{ path, call, key string }{
		{"/shop/keys/public/roll", "RollPublicKey", "pk_next"},
		{"/shop/keys/signing/roll", "RollSigningKey", "sk_next"},
	} {
		cases := []handlerCase{
			// The new key is shown once, and never cached.
			{name: "default overlap", body: `{}`, call: r.call, in: merchant.KeyOverlapDefault},
			{name: "no overlap", body: `{"overlapHours":0}`, call: r.call, in: time.Duration(0)},
			{name: "a week", body: `{"overlapHours":168}`, call: r.call, in: 168 * time.Hour},
			{name: "no body", field: "body"},
			{name: "more than a week", body: `{"overlapHours":169}`, field: "overlapHours"},
			{name: "negative", body: `{"overlapHours":-1}`, field: "overlapHours"},
			{name: "a string", body: `{"overlapHours":"24h"}`, field: "overlapHours"},
		}
		runShopCases(t, http.MethodPost, r.path, withErrors(cases, handlerCase{body: `{}`, call: r.call}, mapIdemMismatch, mapIdemRace))
		g := newFakeGateway(t)
		a := g.shopRequest(fakeShopNo, http.MethodPost, r.path, `{}`)
		if want := `{"kind":"` + map[string]string{"pk_next": merchant.KeyPublic, "sk_next": merchant.KeySigning}[r.key] + `","key":"` + r.key +
			`","rolledAt":"2026-03-01T10:00:00Z","previousValidUntil":null}`; string(a.Data) != want || a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %s (Cache-Control %q), want %s and no-store", r.path, a.Data, a.header.Get("Cache-Control"), want)
		}
	}
}
