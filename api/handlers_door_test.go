package api

// What every /shop request meets before its handler, against fakes:
// authentication (spec section 5), unknown paths and methods, and the
// Idempotency-Key as the handler layer holds it (api/idempotency.go).

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/gateway/ledger"
)

func TestHandleAuthentication(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		headers []string // all of them, credentials included
		status  int
		message string
	}{
		{"no headers", nil, 400, "X-Shop-No: header is required"},
		{"no key", []string{headerShopNo, fakeShopNo}, 400, "X-Public-Key: header is required"},
		{"blank shop", []string{headerShopNo, " ", headerPublicKey, fakePublicKey}, 400, "X-Shop-No: header is required"},
		{"shop twice", []string{headerShopNo, fakeShopNo, headerShopNo, fakeShopNo, headerPublicKey, fakePublicKey}, 400,
			"X-Shop-No: header must appear once"},
		{"key too long", []string{headerShopNo, fakeShopNo, headerPublicKey, strings.Repeat("k", 257)}, 400,
			"X-Public-Key: header is longer than 256 bytes"},
		// An unknown shop and a wrong key are one answer (spec 5.3).
		{"unknown shop", []string{headerShopNo, "SH9999999999", headerPublicKey, fakePublicKey}, 401, messageUnauthorized},
		{"wrong key", []string{headerShopNo, fakeShopNo, headerPublicKey, "pk_wrong"}, 401, messageUnauthorized},
		{"key not ASCII", []string{headerShopNo, fakeShopNo, headerPublicKey, "pk_\u00e9"}, 401, messageUnauthorized},
		{"disabled", []string{headerShopNo, fakeDisabledNo, headerPublicKey, fakePublicKey}, 403, "merchant is disabled"},
		{"outside the whitelist", []string{headerShopNo, fakeWhitelistNo, headerPublicKey, fakePublicKey}, 403,
			"caller IP is not on the merchant's whitelist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGateway(t)
			a := g.shopRequest("", http.MethodGet, "/shop/account", "", tc.headers...)
			checkCase(t, handlerCase{status: tc.status, message: tc.message}, a, g.f.recorded())
		})
	}
	// Header names are case-insensitive (spec section 5).
	g := newFakeGateway(t)
	req, _ := http.NewRequest(http.MethodGet, "/shop/account", nil)
	req.Header["x-shop-no"] = []string{fakeShopNo}
	req.Header["X-PUBLIC-KEY"] = []string{fakePublicKey}
	req.Header = http.Header(cloneCanonical(req.Header))
	checkCase(t, handlerCase{call: "Profile"}, g.serve(g.shop, req), g.f.recorded())
}

// cloneCanonical is what net/http's server does to header names.
func cloneCanonical(h http.Header) http.Header {
	out := http.Header{}
	for k, vs := range h {
		for _, v := range vs {
			out.Add(k, v)
		}
	}
	return out
}

func TestHandleUnknownRoutes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, path, shop string
		status                   int
	}{
		{"unknown path", http.MethodGet, "/shop/nothing", fakeShopNo, 404},
		{"trailing slash", http.MethodGet, "/shop/account/", fakeShopNo, 404},
		{"wrong method", http.MethodPost, "/shop/account", fakeShopNo, 405},
		{"GET of a POST route", http.MethodGet, "/shop/card/create", fakeShopNo, 405},
		// The sandbox exists for a test merchant alone; to anyone else it
		// is an unknown path (docs/api.md, "The sandbox").
		{"sandbox, live merchant", http.MethodPost, "/shop/sandbox/authorize", fakeShopNo, 404},
		{"sandbox, no credentials", http.MethodPost, "/shop/sandbox/authorize", "", 404},
		{"sandbox, wrong method, live merchant", http.MethodGet, "/shop/sandbox/authorize", fakeShopNo, 404},
		{"sandbox, wrong method, test merchant", http.MethodGet, "/shop/sandbox/authorize", fakeTestShopNo, 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGateway(t)
			a := g.shopRequest(tc.shop, tc.method, tc.path, "")
			checkCase(t, handlerCase{status: tc.status}, a, g.f.recorded())
			if tc.status == 404 && a.header.Get("Allow") != "" {
				t.Errorf("a 404 names methods: Allow %q", a.header.Get("Allow"))
			}
		})
	}
}

// The Idempotency-Key as the handler layer holds it: checked at the door,
// handed to the service with the request's fingerprint, held while the
// request runs, and a replay said in a header.
func TestHandleIdempotencyKey(t *testing.T) {
	t.Parallel()
	body := `{"cardNo":"crd_1"}`
	for _, tc := range []struct {
		name string
		keys []string
		want handlerCase
	}{
		{"none", nil, handlerCase{call: "UnfreezeCard"}},
		{"one", []string{"k-1"}, handlerCase{call: "UnfreezeCard"}},
		{"255 bytes", []string{strings.Repeat("k", ledger.IdempotencyKeyBytesMax)}, handlerCase{call: "UnfreezeCard"}},
		{"empty", []string{""}, handlerCase{field: headerIdempotencyKey}},
		{"too long", []string{strings.Repeat("k", ledger.IdempotencyKeyBytesMax+1)}, handlerCase{field: headerIdempotencyKey}},
		{"twice", []string{"k-1", "k-2"}, handlerCase{field: headerIdempotencyKey}},
		{"not ASCII", []string{"k-\u00e9"}, handlerCase{field: headerIdempotencyKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGateway(t)
			var headers []string
			for _, k := range tc.keys {
				headers = append(headers, headerIdempotencyKey, k)
			}
			a := g.shopRequest(fakeShopNo, http.MethodPost, "/shop/card/unfreeze", body, headers...)
			calls := g.f.recorded()
			checkCase(t, tc.want, a, calls)
			if tc.want.call == "" {
				return
			}
			idem := calls[0].idem
			switch {
			case len(tc.keys) == 0 && idem != nil:
				t.Errorf("no key, but the service was given %+v", idem)
			case len(tc.keys) == 1 && (idem == nil || idem.Key != tc.keys[0] || idem.Scope != ledger.ScopeShop ||
				idem.Fingerprint != fingerprint(http.MethodPost, "/shop/card/unfreeze", []byte(body))):
				t.Errorf("key %q: the service was given %+v", tc.keys[0], idem)
			}
		})
	}

	// The same key, byte-identical body, another endpoint: another
	// fingerprint, so the ledger can tell them apart (1008).
	if fingerprint(http.MethodPost, "/shop/card/freeze", []byte(body)) == fingerprint(http.MethodPost, "/shop/card/unfreeze", []byte(body)) {
		t.Error("freeze and unfreeze of one card have one fingerprint")
	}

	t.Run("replayed", func(t *testing.T) {
		g := newFakeGateway(t)
		g.f.replayed = true
		a := g.shopRequest(fakeShopNo, http.MethodPost, "/shop/card/unfreeze", body, headerIdempotencyKey, "k-1")
		checkCase(t, handlerCase{call: "UnfreezeCard"}, a, g.f.recorded())
		if a.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a stored answer without Idempotent-Replayed: %v", a.header)
		}
		g.f.replayed = false
		a = g.shopRequest(fakeShopNo, http.MethodPost, "/shop/card/unfreeze", body, headerIdempotencyKey, "k-2")
		if a.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("a new answer says Idempotent-Replayed")
		}
	})

	// A retry racing the original is refused (1009) without reaching the
	// service, on any endpoint; the key is free again once the original
	// has answered.
	t.Run("in flight", func(t *testing.T) {
		g := newFakeGateway(t)
		block := make(chan struct{})
		g.f.block, g.f.entered = block, make(chan struct{}, 1)
		first := make(chan *answer, 1)
		go func() {
			first <- g.shopRequest(fakeShopNo, http.MethodPost, "/shop/card/unfreeze", body, headerIdempotencyKey, "k-1")
		}()
		<-g.f.entered
		g.f.mu.Lock()
		g.f.block, g.f.entered = nil, nil
		g.f.mu.Unlock()
		a := g.shopRequest(fakeShopNo, http.MethodPost, "/shop/card/cancel", body, headerIdempotencyKey, "k-1")
		checkCase(t, handlerCase{code: codeIdemInProgress, message: "a request with this Idempotency-Key is in progress; retry after it ends"},
			a, nil)
		close(block)
		if a := <-first; a.Code != codeOK {
			t.Fatalf("the original: %d %s", a.Code, a.Message)
		}
		a = g.shopRequest(fakeShopNo, http.MethodPost, "/shop/card/cancel", body, headerIdempotencyKey, "k-1")
		if a.Code != codeOK {
			t.Errorf("after the original answered: %d %s", a.Code, a.Message)
		}
		if n := len(g.f.recorded()); n != 2 {
			t.Errorf("%d calls reached the service, want 2 (the refused one did not)", n)
		}
	})
}

// The body bound is the door's: 413 before the handler.
func TestHandleBodyTooLarge(t *testing.T) {
	t.Parallel()
	g := newFakeGateway(t)
	big := `{"cardNo":"` + string(bytes.Repeat([]byte("c"), BodyBytesMaxDefault)) + `"}`
	a := g.shopRequest(fakeShopNo, http.MethodPost, "/shop/card/cancel", big)
	checkCase(t, handlerCase{status: 413}, a, g.f.recorded())
}

// Every /shop POST (and PUT) hands its Idempotency-Key on: to the command
// itself, or, for a request with no effect of its own, to the read-key
// claim before anything is read. A handler that dropped it would run a
// retry twice.
func TestHandleKeyReachesTheService(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		method, path, body, shop, holder string
	}{
		{http.MethodPost, "/shop/card/create", `{"bin":"453201","currency":"USD","amount":1}`, "", "CreateCard"},
		{http.MethodPost, "/shop/card/freeze", `{"cardNo":"crd_1"}`, "", "FreezeCard"},
		{http.MethodPost, "/shop/card/unfreeze", `{"cardNo":"crd_1"}`, "", "UnfreezeCard"},
		{http.MethodPost, "/shop/card/cancel", `{"cardNo":"crd_1"}`, "", "CancelCard"},
		{http.MethodPost, "/shop/card/transfer", `{"cardNo":"crd_1","amount":1,"currency":"USD","direction":"OUT"}`, "", "Transfer"},
		{http.MethodPost, "/shop/remittance/create", remitBody(benDE, `1`, "EUR", ""), "", "CreateRemittance"},
		{http.MethodPost, "/shop/keys/public/roll", `{}`, "", "RollPublicKey"},
		{http.MethodPost, "/shop/keys/signing/roll", `{}`, "", "RollSigningKey"},
		{http.MethodPost, "/shop/card/balance/batch", `{"cardNos":["crd_1"]}`, "", "ClaimReadIdempotency"},
		{http.MethodPut, "/shop/webhook", `{}`, "", "ClaimReadIdempotency"},
		{http.MethodPost, "/shop/webhook/events/replay", `{"eventId":"evt_1"}`, "", "ClaimReadIdempotency"},
		{http.MethodPost, "/shop/webhook/events/replay-failed", `{"from":"2026-11-25T00:00:00Z","to":"2026-11-26T00:00:00Z"}`, "",
			"ClaimReadIdempotency"},
		{http.MethodPost, "/shop/sandbox/authorize", `{"cardNo":"crd_1","amount":1,"currency":"USD"}`, fakeTestShopNo, "ClaimReadIdempotency"},
		{http.MethodPost, "/shop/sandbox/capture", `{"authId":"auth_1","amount":1}`, fakeTestShopNo, "ClaimReadIdempotency"},
		{http.MethodPost, "/shop/sandbox/reverse", `{"authId":"auth_1"}`, fakeTestShopNo, "ClaimReadIdempotency"},
		{http.MethodPost, "/shop/sandbox/refund", `{"cardNo":"crd_1","amount":1,"currency":"USD"}`, fakeTestShopNo, "ClaimReadIdempotency"},
		{http.MethodPost, "/shop/sandbox/remittance/settle", `{"txId":"rmt_1"}`, fakeTestShopNo, "ClaimReadIdempotency"},
		{http.MethodPost, "/shop/sandbox/remittance/return", `{"txId":"rmt_1","reason":"AC01"}`, fakeTestShopNo, "ClaimReadIdempotency"},
	} {
		t.Run(r.path, func(t *testing.T) {
			g := newFakeGateway(t)
			shop := r.shop
			if shop == "" {
				shop = fakeShopNo
			}
			if a := g.shopRequest(shop, r.method, r.path, r.body, headerIdempotencyKey, "k-route"); a.Code != codeOK {
				t.Fatalf("%d %s", a.Code, a.Message)
			}
			want := fingerprint(r.method, r.path, []byte(r.body))
			for _, c := range g.f.recorded() {
				if c.method == r.holder {
					if c.idem == nil || c.idem.Key != "k-route" || c.idem.Fingerprint != want {
						t.Errorf("%s was given %+v, want the key k-route with the request's fingerprint", c.method, c.idem)
					}
					return
				}
			}
			t.Errorf("%s was never called: %v", r.holder, g.f.recorded())
		})
	}
}
