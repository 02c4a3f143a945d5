package app

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// readMessage finds a network message's cell and id in its path, query or
// body, an authorization's fields for the router's own decline, and
// leaves the body whole for the handler.
func TestReadMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, target, body, want string
	}{
		{"POST", "/network/authorize", `{"messageId":"m","cardNo":"crd_b2xxxxxxxxxxxxxxxxxx","amount":"1.00"}`, "b2"},
		{"POST", "/network/clear", `{"authId":"auth_a1xxxxxxxxxxxxxxxxxx","amount":"1.00"}`, "a1"},
		{"POST", "/network/refund", `{"cardNo":"crd_zzxxxxxxxxxxxxxxxxxx"}`, "zz"}, // a name; the router checks it is a cell
		{"POST", "/network/clear", `{"authId":7,"cardNo":"crd_a1x"}`, "a1"},
		{"POST", "/network/authorize", `{"cardNo":"crd_1axxxxxxxxxxxxxxxxxx"}`, ""},
		{"POST", "/network/authorize", `not json`, ""},
		{"POST", "/network/authorize", `{"cardNo":"` + strings.Repeat("x", routedBodyBytesMax) + `"}`, ""},
		{"GET", "/network/authorizations/auth_b2xxxxxxxxxxxxxxxxxx", "", "b2"},
		{"GET", "/network/authorizations?cardNo=crd_a1xxxxxxxxxxxxxxxxxx&limit=5", "", "a1"},
		{"POST", "/rail/report", `{"messageId":"r","txId":"rmt_b2xxxxxxxxxxxxxxxxxx","status":"SETTLED"}`, "b2"},
		{"POST", "/rail/report", `{"txId":"rmt_zzxxxxxxxxxxxxxxxxxx","cardNo":"crd_a1xxxxxxxxxxxxxxxxxx"}`, "zz"},
		{"POST", "/rail/report", `{"cardNo":"crd_a1xxxxxxxxxxxxxxxxxx"}`, ""}, // a report by its txId only
		{"POST", "/rail/report", `{"txId":"rmt_1bxxxxxxxxxxxxxxxxxx"}`, ""},
		{"POST", "/network/clear", `{"txId":"rmt_b2xxxxxxxxxxxxxxxxxx"}`, ""}, // a network message by its own ids only
		{"GET", "/rail/report?txId=rmt_b2xxxxxxxxxxxxxxxxxx", "", ""},
		{"GET", "/healthz", "", ""},
	} {
		r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
		m := readMessage(r)
		if m.cell != tc.want || (m.cell != "" && !strings.Contains(tc.target+tc.body, m.id)) {
			t.Errorf("%s %s %.40s: cell %q id %q, want %q", tc.method, tc.target, tc.body, m.cell, m.id, tc.want)
		}
		if isAuth := tc.target == "/network/authorize" && m.cell != ""; (m.authorize != nil) != isAuth {
			t.Errorf("%s %s: authorization fields %+v", tc.method, tc.target, m.authorize)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != tc.body {
			t.Errorf("%s %s: the handler would read %.40q, not the body sent", tc.method, tc.target, b)
		}
	}
}

func TestReadMessageAuthorize(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "/network/authorize", strings.NewReader(`{"messageId":"m","cardNo":"crd_b2xxxxxxxxxxxxxxxxxx","amount":"1.50","currency":"USD"}`))
	m := readMessage(r)
	if m.authorize == nil || m.authorize.CardNo != m.id || string(m.authorize.Amount) != `"1.50"` || m.authorize.Currency != "USD" {
		t.Errorf("authorization fields %+v", m.authorize)
	}
}

func FuzzReadMessage(f *testing.F) {
	f.Add("/network/clear", `{"authId":"auth_a1xxxxxxxxxxxxxxxxxx"}`)
	f.Add("/network/authorizations/crd_", `{"cardNo":null}`)
	f.Add("/rail/report", `{"txId":"rmt_b2xxxxxxxxxxxxxxxxxx","cardNo":"crd_a1xxxxxxxxxxxxxxxxxx"}`)
	f.Fuzz(func(t *testing.T, path, body string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.URL.Path = path
		cell := readMessage(r).cell
		if cell != "" && len(cell) != 2 {
			t.Fatalf("cell %q", cell)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != body {
			t.Fatal("the body changed")
		}
	})
}
