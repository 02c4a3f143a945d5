package api

// The handler tests' server: NewServer and NewInternalServer on the fakes
// of fakes_test.go, called through httptest.NewRecorder (no listener), and
// the table that every route's cases are written in.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
)

const fakeInternalToken = "tok_internal_0123456789abcdef"

// fakeGateway is the /shop and the internal handlers on one fakeServices.
type fakeGateway struct {
	t        *testing.T
	f        *fakeServices
	shop     http.Handler
	internal http.Handler
}

func newFakeGateway(t *testing.T) *fakeGateway {
	t.Helper()
	f := &fakeServices{}
	shop := NewServer(Deps{DB: fakePinger{}, Merchants: f, Accounts: f, Cards: f, ReadKeys: f, Bills: f, Remittances: f,
		Stats: f, WebhookSettings: f, Webhooks: f, Keys: f, Sandbox: newSandbox(f, f, f, f, f)})
	internal := NewInternalServer(PartnerDeps{Network: f, Rails: f, Token: fakeInternalToken})
	return &fakeGateway{t: t, f: f, shop: shop, internal: internal}
}

type fakePinger struct{}

func (fakePinger) PingContext(context.Context) error { return nil }

// serve sends req to h and returns the answer, after checking that it is
// the spec's envelope exactly.
func (g *fakeGateway) serve(h http.Handler, req *http.Request) *answer {
	g.t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	a := &answer{status: w.Code, header: w.Header(), raw: w.Body.Bytes()}
	// The envelope of the spec (section 2.1) and docs/errors.md, as the
	// HTTP fuzzer checks it: exactly code, message and data, as JSON; an
	// HTTP failure's code its status; a failure's data null; a code in the
	// tables. The fuzzer never meets a 500 or a 503, which a fake's error
	// makes here: checked as the 400 they are shaped like, with their own
	// code, and a 503 says when to retry.
	resp, checked := w.Result(), a.raw
	if a.status >= 500 {
		resp.StatusCode = http.StatusBadRequest
		checked = bytes.Replace(a.raw, fmt.Appendf(nil, `{"code":%d,`, a.status), []byte(`{"code":400,`), 1)
	}
	if _, problem := checkEnvelope(resp, checked); problem != "" {
		g.t.Fatalf("%s %s: %s", req.Method, req.URL, problem)
	}
	if a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") == "" {
		g.t.Errorf("%s %s: a 503 without Retry-After", req.Method, req.URL)
	}
	if err := json.Unmarshal(a.raw, a); err != nil {
		g.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	return a
}

// internalRequest is a request of the internal API, with its bearer token
// when auth.
func (g *fakeGateway) internalRequest(auth bool, method, target, body string, headers ...string) *answer {
	g.t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if auth {
		req.Header.Set("Authorization", "Bearer "+fakeInternalToken)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	return g.serve(g.internal, req)
}

// shopRequest is a /shop request with the given shop's credentials ("":
// none) and extra headers as name, value pairs.
func (g *fakeGateway) shopRequest(shopNo, method, target, body string, headers ...string) *answer {
	g.t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if shopNo != "" {
		req.Header.Set(headerShopNo, shopNo)
		req.Header.Set(headerPublicKey, fakePublicKey)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	return g.serve(g.shop, req)
}

// handlerCase is one request to a route and what must come of it.
type handlerCase struct {
	name    string
	query   string   // appended to the path, with its "?"
	body    string   // the request body
	headers []string // extra headers, name, value pairs
	shop    string   // the caller; "": fakeShopNo
	err     error    // what the service answers
	errOn   string   // the one method that answers err; "": each
	noAuth  bool     // internal API: no bearer token
	status  int      // the HTTP status; 0: 200
	code    int      // the envelope's code; 0: 200
	message string   // the envelope's message exactly; "": success's
	field   string   // a 400's field, which its message must begin with
	data    string   // data exactly, as JSON; "": not checked (null on failure is checkEnvelope's)
	call    string   // the service methods the handler calls, comma-separated; "": none
	in      any      // the last one's decoded input, when not nil
}

// runShopCases runs each case against method path of /shop on a fresh
// gateway; runInternalCases of the internal API, with its token.
func runShopCases(t *testing.T, method, path string, cases []handlerCase) {
	t.Helper()
	runCases(t, false, method, path, cases)
}

func runInternalCases(t *testing.T, method, path string, cases []handlerCase) {
	t.Helper()
	runCases(t, true, method, path, cases)
}

func runCases(t *testing.T, internal bool, method, path string, cases []handlerCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.f.err, g.f.errOn = tc.err, tc.errOn
			var a *answer
			if internal {
				a = g.internalRequest(!tc.noAuth, method, path+tc.query, tc.body, tc.headers...)
			} else {
				shop := tc.shop
				if shop == "" {
					shop = fakeShopNo
				}
				a = g.shopRequest(shop, method, path+tc.query, tc.body, tc.headers...)
			}
			checkCase(t, tc, a, g.f.recorded())
		})
	}
}

// checkCase checks an answer and the service calls against a case.
func checkCase(t *testing.T, tc handlerCase, a *answer, calls []fakeCall) {
	t.Helper()
	status, code, message := tc.status, tc.code, tc.message
	if status == 0 {
		status = http.StatusOK
	}
	if tc.field != "" {
		status, code = http.StatusBadRequest, http.StatusBadRequest
	}
	if code == 0 {
		code = status // an HTTP failure repeats its status; 200 is success
	}
	if message == "" && code == codeOK {
		message = messageOK
	}
	if a.status != status || a.Code != code || (message != "" && a.Message != message) {
		t.Errorf("got HTTP %d code %d %q, want HTTP %d code %d %q", a.status, a.Code, a.Message, status, code, message)
	}
	if tc.field != "" && (a.status != http.StatusBadRequest || !strings.HasPrefix(a.Message, tc.field+": ")) {
		t.Errorf("HTTP %d %q, want a 400 naming %s", a.status, a.Message, tc.field)
	}
	if tc.data != "" && string(a.Data) != tc.data {
		t.Errorf("data\n got %s\nwant %s", a.Data, tc.data)
	}
	var called []string
	for _, c := range calls {
		if c.method != "ClaimReadIdempotency" { // the read's key, checked where it matters
			called = append(called, c.method)
		}
	}
	switch {
	case tc.call == "" && len(called) > 0:
		t.Errorf("the service was called (%v): a refusal at the door must not reach it", called)
	case tc.call != "" && strings.Join(called, ",") != tc.call:
		t.Errorf("calls %v, want %s", called, tc.call)
	}
	for _, c := range calls {
		if c.merchant != 0 && c.merchant != fakeMerchantID {
			t.Errorf("%s for merchant %d, want the caller %d", c.method, c.merchant, fakeMerchantID)
		}
		// in is the input of the last call (the one that answers).
		if tc.in != nil && len(called) > 0 && c.method == called[len(called)-1] && !reflect.DeepEqual(c.in, tc.in) {
			t.Errorf("%s was given\n %#v\nwant\n %#v", c.method, c.in, tc.in)
		}
	}
}

// mapped is a service error and the answer it must get (docs/errors.md).
type mapped struct {
	name         string
	err          error
	status, code int
	message      string
}

// domainErr is an error as the services make it, without a message: the
// envelope then says the code's.
func domainErr(code postings.Code, reason postings.Reason) error {
	return &postings.Error{Code: code, Reason: reason}
}

// The answers of the services' errors, business failures first.
var (
	mapCardNotFound  = mapped{"unknown card", domainErr(postings.ENOTFOUND, postings.ReasonCard), 200, codeCardNotFound, "card not found"}
	mapCardFrozen    = mapped{"frozen card", domainErr(postings.ESTATE, postings.ReasonCardFrozen), 200, codeCardFrozen, "card is frozen"}
	mapCardCancelled = mapped{"cancelled card", domainErr(postings.ESTATE, postings.ReasonCardCancelled), 200, codeCardCancelled, "card is cancelled"}
	mapCurrency      = mapped{"currency denied", domainErr(postings.EFORBIDDEN, postings.ReasonCurrency), 200, codeCurrencyDenied, "currency not allowed"}
	mapBIN           = mapped{"BIN denied", domainErr(postings.EFORBIDDEN, postings.ReasonBIN), 200, codeBINDenied, "BIN not open to the merchant"}
	mapLimit         = mapped{"limit", domainErr(postings.ELIMIT, ""), 200, codeLimitExceeded, "limit exceeded"}
	mapInsufficient  = mapped{"insufficient", domainErr(postings.EINSUFFICIENT, ""), 200, codeInsufficient, "insufficient funds"}
	mapIdemMismatch  = mapped{"key reused", domainErr(postings.ECONFLICT, postings.ReasonIdempotencyMismatch), 200, codeIdemConflict,
		"Idempotency-Key reused with another request"}
	mapIdemRace = mapped{"key in progress elsewhere", domainErr(postings.ECONFLICT, postings.ReasonIdempotencyRace), 200, codeIdemInProgress,
		"a request with this Idempotency-Key is in progress"}
	mapFXPair        = mapped{"no FX pair", domainErr(postings.EFORBIDDEN, postings.ReasonFXPair), 200, codeFXUnavailable, "FX rate unavailable"}
	mapFXStale       = mapped{"stale FX rate", domainErr(postings.EFORBIDDEN, postings.ReasonFXRateStale), 200, codeFXUnavailable, "FX rate unavailable"}
	mapRemitNotFound = mapped{"unknown remittance", domainErr(postings.ENOTFOUND, postings.ReasonRemittance), 200, codeRemitNotFound, "remittance not found"}
	mapEventNotFound = mapped{"unknown event", domainErr(postings.ENOTFOUND, postings.ReasonEvent), 200, codeEventNotFound, "event not found"}
	mapAuthNotFound  = mapped{"unknown authorization", domainErr(postings.ENOTFOUND, postings.ReasonAuthorization), 200, codeAuthNotFound, "authorization not found"}
	mapAuthClosed    = mapped{"closed authorization", domainErr(postings.ESTATE, postings.ReasonAuthorizationClosed), 200, codeAuthClosed, "the authorization is closed"}
	mapMessageID     = mapped{"message id reused", domainErr(postings.ECONFLICT, postings.ReasonMessageID), 200, codeIdemConflict,
		"Idempotency-Key reused with another request"}
	// Every route that calls a service: an outage did nothing and may be
	// retried (503 with Retry-After); anything unknown is a bug, told as
	// nothing (500).
	mapUnavailable = mapped{"unavailable", domainErr(postings.EUNAVAILABLE, ""), 503, 503, messageUnavailable}
	mapDeadline    = mapped{"deadline", context.DeadlineExceeded, 503, 503, messageTimeout}
	mapInternal    = mapped{"internal", errors.New("pq: relation does not exist"), 500, 500, messageInternal}
)

// withErrors adds to cases, for a request that reaches call with in, one
// case per service error, and the outage, time-out and bug every call can
// meet.
func withErrors(cases []handlerCase, req handlerCase, ms ...mapped) []handlerCase {
	for _, m := range append(ms, mapUnavailable, mapDeadline, mapInternal) {
		tc := req
		tc.name, tc.err, tc.status, tc.code, tc.message = m.name, m.err, m.status, m.code, m.message
		tc.data = ""
		cases = append(cases, tc)
	}
	return cases
}
