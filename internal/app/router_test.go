package app

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// messageCell finds a network message's cell in its path, query or body,
// and leaves the body whole for the handler.
func TestMessageCell(t *testing.T) {
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
		{"POST", "/rail/report", `{"cardNo":"crd_a1xxxxxxxxxxxxxxxxxx"}`, ""},
		{"GET", "/healthz", "", ""},
	} {
		r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
		if got := messageCell(r); got != tc.want {
			t.Errorf("%s %s %.40s: cell %q, want %q", tc.method, tc.target, tc.body, got, tc.want)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != tc.body {
			t.Errorf("%s %s: the handler would read %.40q, not the body sent", tc.method, tc.target, b)
		}
	}
}

func FuzzMessageCell(f *testing.F) {
	f.Add("/network/clear", `{"authId":"auth_a1xxxxxxxxxxxxxxxxxx"}`)
	f.Add("/network/authorizations/crd_", `{"cardNo":null}`)
	f.Fuzz(func(t *testing.T, path, body string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.URL.Path = path
		cell := messageCell(r)
		if cell != "" && len(cell) != 2 {
			t.Fatalf("cell %q", cell)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != body {
			t.Fatal("the body changed")
		}
	})
}
