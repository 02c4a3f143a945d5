package api

// The webhook endpoints' handlers against fakes (fakes_endpoints_test.go).

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/postings"
)

var mapEndpointNotFound = mapped{"unknown endpoint", domainErr(postings.ENOTFOUND, postings.ReasonWebhookEndpoint), 200,
	codeEndpointNotFound, "webhook endpoint not found"}

func sp(url *string, types *[]string, enabled *bool) delivery.EndpointSpec {
	return delivery.EndpointSpec{URL: url, EventTypes: types, Enabled: enabled}
}

func ref[T any](v T) *T { return &v }

func TestHandleEndpointList(t *testing.T) {
	t.Parallel()
	runShopCases(t, http.MethodGet, "/shop/webhook/endpoints", withErrors([]handlerCase{{name: "endpoint one", call: "Endpoints",
		data: `{"list":[{"id":"` + fakeEndpointOne + `","url":"https://merchant.example.com/hooks","eventTypes":[],"allEvents":true,` +
			`"enabled":true,"default":true,"description":"","createdAt":"2026-03-01T10:00:00Z","previousSecretValidUntil":null}]}`}},
		handlerCase{call: "Endpoints"}))
}

func TestHandleEndpointCreate(t *testing.T) {
	t.Parallel()
	url := "https://merchant.example.com/two"
	ok := `{"url":"` + url + `","eventTypes":["card.frozen"]}`
	cases := []handlerCase{
		{name: "created with its secret", body: ok, call: "CreateEndpoint", in: sp(&url, &[]string{"card.frozen"}, nil),
			data: `{"id":"` + fakeEndpointTwo + `","url":"https://merchant.example.com/two","eventTypes":["card.frozen"],"allEvents":false,` +
				`"enabled":true,"default":false,"description":"","createdAt":"2026-03-01T10:00:00Z","previousSecretValidUntil":null,"secret":"whsec_new"}`},
		{name: "every type, disabled", body: `{"url":"` + url + `","eventTypes":[],"enabled":false}`, call: "CreateEndpoint",
			in: sp(&url, &[]string{}, ref(false))},
		{name: "no url", body: `{"eventTypes":["card.frozen"]}`, field: "url"},
		{name: "empty url", body: `{"url":""}`, field: "url"},
		{name: "loopback url", body: `{"url":"http://127.0.0.1:9/hooks"}`, field: "url"},
		{name: "not a URL", body: `{"url":"hooks"}`, field: "url"},
		{name: "unknown type", body: `{"url":"` + url + `","eventTypes":["card.melted"]}`, field: "eventTypes"},
		{name: "type twice", body: `{"url":"` + url + `","eventTypes":["card.frozen","card.frozen"]}`, field: "eventTypes"},
		{name: "types not strings", body: `{"url":"` + url + `","eventTypes":[1]}`, field: "eventTypes"},
		{name: "enabled not a boolean", body: `{"url":"` + url + `","enabled":"yes"}`, field: "enabled"},
		{name: "description too long", body: `{"url":"` + url + `","description":"` + strings.Repeat("d", 201) + `"}`,
			call: "CreateEndpoint"}, // the store bounds it (its test)
		{name: "unknown field", body: `{"url":"` + url + `","events":[]}`, field: "events"},
	}
	// The 17th endpoint is 1007, limit exceeded.
	runShopCases(t, http.MethodPost, "/shop/webhook/endpoints", withErrors(cases, handlerCase{body: ok, call: "CreateEndpoint"}, mapLimit))
}

func TestHandleEndpointOne(t *testing.T) {
	t.Parallel()
	path := "/shop/webhook/endpoints/"
	runShopCases(t, http.MethodGet, path+fakeEndpointTwo, withErrors([]handlerCase{{name: "read", call: "Endpoint", in: fakeEndpointTwo}},
		handlerCase{call: "Endpoint"}, mapEndpointNotFound))
	runShopCases(t, http.MethodGet, path+"we_short", []handlerCase{{name: "bad id", field: "endpointId"}})
	runShopCases(t, http.MethodDelete, path+fakeEndpointTwo, withErrors([]handlerCase{{name: "deleted", call: "DeleteEndpoint",
		in: fakeEndpointTwo, data: `{"id":"` + fakeEndpointTwo + `","deleted":true}`}}, handlerCase{call: "DeleteEndpoint"}, mapEndpointNotFound))
	runShopCases(t, http.MethodPost, path+fakeEndpointTwo+"/secret/roll", withErrors([]handlerCase{
		{name: "rolled", body: `{"overlapHours":2}`, call: "RollEndpointSecret", in: 2 * time.Hour},
		{name: "overlap too long", body: `{"overlapHours":169}`, field: "overlapHours"},
	}, handlerCase{body: `{}`, call: "RollEndpointSecret"}, mapEndpointNotFound))

	url := "https://merchant.example.com/moved"
	runShopCases(t, http.MethodPost, path+fakeEndpointTwo, withErrors([]handlerCase{
		{name: "disabled", body: `{"enabled":false}`, call: "Endpoint,UpdateEndpoint", in: sp(nil, nil, ref(false))},
		{name: "moved", body: `{"url":"` + url + `"}`, call: "Endpoint,UpdateEndpoint", in: sp(&url, nil, nil)},
		{name: "every type", body: `{"eventTypes":null}`, call: "Endpoint,UpdateEndpoint", in: sp(nil, nil, nil)},
		{name: "private url", body: `{"url":"http://10.0.0.5/hooks"}`, field: "url"},
	}, handlerCase{body: `{}`, call: "Endpoint"}, mapEndpointNotFound))
	// Endpoint one's url is the merchant's default URL.
	runShopCases(t, http.MethodPost, path+fakeEndpointOne, []handlerCase{
		{name: "endpoint one moved", body: `{"url":"` + url + `"}`, call: "Endpoint,UpdateEndpoint,SetCallbackURL", in: url},
		{name: "endpoint one cleared", body: `{"url":""}`, call: "Endpoint,UpdateEndpoint,SetCallbackURL", in: ""},
	})
}
