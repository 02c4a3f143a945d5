package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
)

// The security probes of docs/security.md. Each /shop route is taken from
// gin's own route table, so a route added later is probed too, and a route
// without a probe below fails TestShopIsolationEveryRoute until one is
// written.

// shopRoutes lists the running server's /shop routes as "METHOD path".
func (s *testServer) shopRoutes() []string {
	s.t.Helper()
	eng, ok := s.srv.Config.Handler.(*gin.Engine)
	if !ok {
		s.t.Fatalf("the server's handler is a %T, not a *gin.Engine", s.srv.Config.Handler)
	}
	var out []string
	for _, r := range eng.Routes() {
		if strings.HasPrefix(r.Path, "/shop/") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	sort.Strings(out)
	return out
}

// journal is a fingerprint of everything money and state: the entries, every
// balance, every card's status and the remittances. A refused request must
// leave it as it was.
func (s *testServer) journal() string {
	s.t.Helper()
	var out string
	err := s.l.DB().NewRaw(`select
		(select count(*) from entries)::text || '|' ||
		coalesce((select string_agg(account_id::text || ':' || balance::text || ':' || last_seq::text, ',' order by account_id) from balances), '') || '|' ||
		coalesce((select string_agg(card_no || ':' || status, ',' order by card_no) from cards), '') || '|' ||
		(select count(*) from remittances)::text`).Scan(context.Background(), &out)
	if err != nil {
		s.t.Fatalf("journal: %v", err)
	}
	return out
}

// Placeholders of the ids a probe sends.
const (
	probeCard  = "{cardNo}"
	probeTx    = "{txId}"
	probeEvent = "{eventId}"
	// probeEndpoint is a webhook endpoint's id (the path's :endpointId).
	probeEndpoint = "{endpointId}"
)

// isolationProbes are, per /shop route, a request that names a card and a
// remittance by id: query (GET) or body (POST), with the placeholders
// above. Routes that take no id still get a request: their answer must not
// depend on whose ids are around.
var isolationProbes = map[string]string{
	"GET /shop/account":                   "",
	"GET /shop/card/bin/list":             "",
	"GET /shop/card/info":                 "cardNo=" + probeCard,
	"GET /shop/card/list":                 "size=500",
	"GET /shop/card/balance":              "cardNo=" + probeCard,
	"POST /shop/card/balance/batch":       `{"cardNos":["` + probeCard + `"]}`,
	"POST /shop/card/create":              `{"bin":"453201","currency":"USD","amount":"1.00"}`,
	"POST /shop/card/freeze":              `{"cardNo":"` + probeCard + `","reason":"probe"}`,
	"POST /shop/card/unfreeze":            `{"cardNo":"` + probeCard + `"}`,
	"POST /shop/card/cancel":              `{"cardNo":"` + probeCard + `"}`,
	"POST /shop/card/transfer":            `{"cardNo":"` + probeCard + `","amount":1,"currency":"USD","direction":"OUT"}`,
	"GET /shop/bill/list":                 "startDate={today}&endDate={today}&size=500",
	"GET /shop/reports/balance":           "startDate={today}&endDate={today}",
	"GET /shop/reports/balance/totals":    "startDate={today}&endDate={today}",
	"GET /shop/remittance/dynamic-fields": "country=DE&currency=EUR",
	"POST /shop/remittance/create":        `{"payer_id":"probe","beneficiary":` + benDE + `,"amount":"1.00","currency":"EUR"}`,
	"GET /shop/remittance/query":          "txId=" + probeTx,
	// Webhooks and keys. A roll, like a create, changes the thief's own
	// state: only its answer's shape is checked.
	"GET /shop/webhook":                                    "",
	"PUT /shop/webhook":                                    `{"callbackUrl":"https://merchant.example.com/probe"}`,
	"GET /shop/webhook/events":                             "size=500",
	"GET /shop/webhook/events/:eventId":                    "", // the event's id is the path's (:eventId)
	"POST /shop/webhook/secret/roll":                       `{"overlapHours":24}`,
	"POST /shop/webhook/events/replay":                     `{"eventId":"` + probeEvent + `"}`,
	"POST /shop/webhook/events/replay-failed":              `{"from":"{today}T00:00:00Z","to":"{today}T23:59:59Z"}`,
	"GET /shop/webhook/endpoints":                          "",
	"POST /shop/webhook/endpoints":                         `{"url":"https://merchant.example.com/probe"}`,
	"GET /shop/webhook/endpoints/:endpointId":              "",
	"POST /shop/webhook/endpoints/:endpointId":             `{"description":"probe"}`,
	"DELETE /shop/webhook/endpoints/:endpointId":           "",
	"POST /shop/webhook/endpoints/:endpointId/secret/roll": `{"overlapHours":24}`,
	"GET /shop/keys":                                       "",
	"POST /shop/keys/public/roll":                          `{"overlapHours":24}`,
	"POST /shop/keys/signing/roll":                         `{"overlapHours":24}`,
	// The sandbox (a test merchant's; TestSandboxOtherMerchantsObjects
	// probes authorizations, which have no placeholder here).
	"POST /shop/sandbox/authorize":         `{"cardNo":"` + probeCard + `","amount":"1.00","currency":"USD"}`,
	"POST /shop/sandbox/capture":           `{"authId":"` + probeTx + `","amount":"1.00"}`,
	"POST /shop/sandbox/reverse":           `{"authId":"` + probeTx + `"}`,
	"POST /shop/sandbox/refund":            `{"cardNo":"` + probeCard + `","amount":"1.00","currency":"USD"}`,
	"POST /shop/sandbox/remittance/settle": `{"txId":"` + probeTx + `"}`,
	"POST /shop/sandbox/remittance/return": `{"txId":"` + probeTx + `","reason":"AC04"}`,
	// The test clock is the merchant's own: nothing of another's to name.
	"GET /shop/sandbox/clock":          "",
	"POST /shop/sandbox/clock/advance": `{"duration":"1h"}`,
}

// Every /shop endpoint, GET and POST, asked by one merchant about another
// merchant's card and remittance, answers byte for byte what it answers
// about ids that exist nowhere; and no answer to the thief carries the
// owner's shop number (which every bill id holds) or the owner's ids
// beyond those the request named.
func TestShopIsolationEveryRoute(t *testing.T) {
	t.Parallel()
	// The ledger's clock stays on the day the test started, the day the
	// bill probe asks for: past midnight the thief's bill would be empty.
	now, today := todayClock()
	s := newTestServer(t, serverOptions{ledgerNow: now})
	// Test merchants: every route, the sandbox's included, is theirs, and
	// the others answer them as they answer live merchants.
	owner := s.testShop()
	thief := s.testShop()
	card := s.createCard(owner, `{"bin":"453201","currency":"USD","amount":"20.00"}`)
	remit := s.createRemittance(owner, remitBody(benDE, `"10.00"`, "EUR", ""))
	// The thief's own card makes its bill and balances non-empty.
	s.createCard(thief, `{"bin":"453201","currency":"USD","amount":"1.00"}`)
	unknownCard, unknownTx := "crd_"+strings.Repeat("0", 20), "rmt_"+strings.Repeat("0", 20)
	unknownEvent := "evt_" + strings.Repeat("0", 24)
	ownerEvents, err := s.l.Deliveries.Events(context.Background(), owner.m.ID, delivery.EventFilter{}, 1, 1)
	if err != nil || len(ownerEvents.List) == 0 {
		t.Fatalf("the owner's events: %+v %v", ownerEvents, err)
	}
	event := ownerEvents.List[0].EventID
	ownerEndpoint, err := s.l.Deliveries.CreateEndpoint(context.Background(), owner.m.ID,
		delivery.EndpointSpec{URL: &[]string{"https://merchant.example.com/owner"}[0]})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, unknownEndpoint := ownerEndpoint.ID, "we_"+strings.Repeat("0", 24)

	routes := s.shopRoutes()
	for _, route := range routes {
		probe, ok := isolationProbes[route]
		if !ok {
			t.Errorf("%s has no isolation probe: add one to isolationProbes", route)
			continue
		}
		method, path, _ := strings.Cut(route, " ")
		send := func(cardNo, txID, eventID, endpointID string) *answer {
			fills := strings.NewReplacer(probeCard, cardNo, probeTx, txID, probeEvent, eventID, probeEndpoint, endpointID, "{today}", today)
			fill := fills.Replace(probe)
			// A path parameter names the object itself.
			path := fills.Replace(strings.NewReplacer(":eventId", probeEvent, ":endpointId", probeEndpoint).Replace(path))
			if method == "GET" {
				if fill != "" {
					return s.request(&thief, method, path+"?"+fill, "")
				}
				return s.request(&thief, method, path, "")
			}
			return s.request(&thief, method, path, fill)
		}
		// The card create and remittance create probes would succeed and
		// move money (a roll, an endpoint and a clock advance change the
		// thief's own state): they run once each, and only the answer's
		// shape is compared.
		foreign := send(card.CardNo, remit.TxID, event, endpoint)
		if method == "POST" && (strings.HasSuffix(path, "/create") || strings.HasSuffix(path, "/roll") || strings.HasSuffix(path, "/endpoints") ||
			strings.HasSuffix(path, "/clock/advance")) {
			if strings.Contains(string(foreign.raw), owner.creds.ShopNo) || strings.Contains(string(foreign.raw), remit.TxID) {
				t.Errorf("%s: the answer carries the owner's ids: %s", route, foreign.raw)
			}
			continue
		}
		missing := send(unknownCard, unknownTx, unknownEvent, unknownEndpoint)
		ids := strings.NewReplacer(card.CardNo, probeCard, remit.TxID, probeTx, unknownCard, probeCard, unknownTx, probeTx,
			event, probeEvent, unknownEvent, probeEvent, endpoint, probeEndpoint, unknownEndpoint, probeEndpoint)
		// The thief's own last authentication is the time of each probe:
		// two probes a second boundary apart differ there (and the first
		// may find none recorded yet, null, on a loaded machine); it says
		// nothing of the owner.
		mask := func(raw []byte) string {
			return lastAuthenticated.ReplaceAllString(ids.Replace(string(raw)), `"lastAuthenticatedAt":"…"`)
		}
		if got, want := mask(foreign.raw), mask(missing.raw); got != want || foreign.status != missing.status {
			t.Errorf("%s: another merchant's ids are told apart from unknown ones:\nforeign HTTP %d %s\nunknown HTTP %d %s",
				route, foreign.status, foreign.raw, missing.status, missing.raw)
		}
		if strings.Contains(string(foreign.raw), owner.creds.ShopNo) {
			t.Errorf("%s: the answer carries the owner's shop number: %s", route, foreign.raw)
		}
		if foreign.Code == codeOK && strings.Contains(path, "/bill/") && !strings.Contains(string(foreign.raw), thief.creds.ShopNo) {
			t.Errorf("%s: the thief's own bill is empty, so the probe proves nothing: %s", route, foreign.raw)
		}
	}
	for route := range isolationProbes {
		if !contains(routes, route) {
			t.Logf("isolationProbes lists %s, which the server does not serve", route)
		}
	}
	// Nothing of the owner's moved: its card and remittance are as they
	// were.
	if info := s.cardInfo(owner, card.CardNo); info.Status != "ACTIVE" || info.Balance.String() != "20.00" {
		t.Errorf("owner's card %+v", info)
	}
	if q, _ := s.queryRemittance(owner, remit.TxID); q.Status != remit.Status {
		t.Errorf("owner's remittance %s, was %s", q.Status, remit.Status)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// authVariant is one way of failing authentication.
type authVariant struct {
	name    string
	headers []string
}

// An unknown shop, a wrong key, another shop's key, a disabled merchant's
// shop with a wrong key, a private key sent as the public key and a
// malformed credential all get one answer on every /shop route: the same
// status, the same body and the same headers (but Date and X-Request-Id).
// TestAuthUnknownShopAndWrongKeyIdentical pins the body on one route.
func TestAuthFailuresIdenticalEveryRoute(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	other := s.newShop(merchant.Spec{})
	disabled := s.newShop(merchant.Spec{})
	if err := s.l.SetMerchantStatus(context.Background(), disabled.m.ID, merchant.Disabled); err != nil {
		t.Fatal(err)
	}
	variants := []authVariant{
		{"unknown shop", []string{"X-Shop-No", "SH0000000000", "X-Public-Key", sh.creds.PublicKey}},
		{"wrong key", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", "pk_" + strings.Repeat("x", 40)}},
		{"another shop's key", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", other.creds.PublicKey}},
		{"disabled shop, wrong key", []string{"X-Shop-No", disabled.creds.ShopNo, "X-Public-Key", sh.creds.PublicKey}},
		{"private key as public key", []string{"X-Shop-No", sh.creds.ShopNo, "X-Public-Key", sh.creds.PrivateKey}},
		{"non-ASCII shop number", []string{"X-Shop-No", "SH\xc3\xa9", "X-Public-Key", sh.creds.PublicKey}},
		{"lower-case names, wrong key", []string{"x-shop-no", sh.creds.ShopNo, "x-public-key", "pk_wrong"}},
	}
	var first *answer
	var firstName string
	for _, route := range s.shopRoutes() {
		method, path, _ := strings.Cut(route, " ")
		if strings.HasPrefix(path, sandboxPrefix) {
			// Without a test merchant's credentials the sandbox is an
			// unknown path, 404 (TestSandboxHiddenFromOthers).
			continue
		}
		body := ""
		if method == "POST" {
			body = `{"cardNo":"crd_x"}`
		}
		for _, v := range variants {
			req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(v.headers); i += 2 {
				req.Header[v.headers[i]] = []string{v.headers[i+1]}
			}
			a := s.send(req).must(t, 401, 401)
			if first == nil {
				first, firstName = a, route+", "+v.name
				continue
			}
			if string(a.raw) != string(first.raw) {
				t.Errorf("%s, %s: body %s; %s: %s", route, v.name, a.raw, firstName, first.raw)
			}
			if got, want := headerSet(a.header), headerSet(first.header); got != want {
				t.Errorf("%s, %s: headers\n%s\n%s:\n%s", route, v.name, got, firstName, want)
			}
		}
	}
}

// headerSet is a response's headers but the ones that differ by nature.
func headerSet(h http.Header) string {
	var lines []string
	for name, vs := range h {
		if name == "Date" || name == "X-Request-Id" {
			continue
		}
		lines = append(lines, name+": "+strings.Join(vs, ", "))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Only X-Forwarded-For, and only from a trusted proxy, moves the client IP
// away from the TCP peer: X-Real-IP, Forwarded, True-Client-IP and their
// kind are never believed, nor is an X-Forwarded-For from anyone else
// (TestAuthIPWhitelist and TestClientIP cover the X-Forwarded-For walk).
func TestForgedClientIPHeaders(t *testing.T) {
	t.Parallel()
	forged := [][]string{
		{"X-Real-IP", "10.1.2.3"},
		{"X-Real-Ip", "10.1.2.3"},
		{"Forwarded", "for=10.1.2.3"},
		{"Forwarded", `for="[2001:db8::1]";proto=https`},
		{"True-Client-IP", "10.1.2.3"},
		{"CF-Connecting-IP", "10.1.2.3"},
		{"X-Client-IP", "10.1.2.3"},
		{"X-Cluster-Client-IP", "10.1.2.3"},
		{"X-Appengine-Remote-Addr", "10.1.2.3"},
		{"X-Forwarded", "for=10.1.2.3"},
		{"x-forwarded-for", "10.1.2.3"},
		{"X-FORWARDED-FOR", "10.1.2.3, 10.1.2.4"},
	}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	for _, proxies := range [][]netip.Prefix{nil, loopback} {
		t.Run(fmt.Sprintf("trusted proxies %v", proxies), func(t *testing.T) {
			s := newTestServer(t, serverOptions{proxies: proxies})
			sh := s.newShop(merchant.Spec{IPWhitelist: []string{"10.0.0.0/8", "2001:db8::/32"}})
			for _, h := range forged {
				want := 403
				if proxies != nil && strings.EqualFold(h[0], "X-Forwarded-For") {
					want = 200 // the trusted proxy's header, as spelled in any case
				}
				a := s.request(&sh, "GET", "/shop/account", "", h...)
				if a.status != want || a.Code != want {
					t.Errorf("%s: %s: HTTP %d code %d, want %d: %s", h[0], h[1], a.status, a.Code, want, a.raw)
				}
			}
			// All of them at once, X-Forwarded-For left out.
			var all []string
			for _, h := range forged {
				if !strings.EqualFold(h[0], "X-Forwarded-For") {
					all = append(all, h...)
				}
			}
			s.request(&sh, "GET", "/shop/account", "", all...).must(t, 403, 403)
		})
	}
}

// Header names are case-insensitive (HTTP), but a header given twice, under
// any spellings, is refused rather than guessed at; a name spelled with
// underscores is another header.
func TestHeaderVariants(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	other := s.newShop(merchant.Spec{})
	k := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"5.00"}`)
	tests := []struct {
		name    string
		headers []string // after the shop's own credentials
		status  int
		msg     string
	}{
		{"X-Shop-No twice, same value", []string{"X-Shop-No", sh.creds.ShopNo}, 400, "X-Shop-No: header must appear once"},
		{"X-Shop-No twice, another shop", []string{"X-Shop-No", other.creds.ShopNo}, 400, "X-Shop-No: header must appear once"},
		{"X-Shop-No twice, other case", []string{"x-shop-no", other.creds.ShopNo}, 400, "X-Shop-No: header must appear once"},
		{"X-Public-Key twice", []string{"X-PUBLIC-KEY", other.creds.PublicKey}, 400, "X-Public-Key: header must appear once"},
		{"X-Shop-No with two values in one line", []string{"X-Shop-No", "\x00delete", "X-Shop-No", sh.creds.ShopNo + "," + other.creds.ShopNo}, 401, messageUnauthorized},
		{"underscores are another header", []string{"X-Shop-No", "\x00delete", "X_Shop_No", sh.creds.ShopNo}, 400, "X-Shop-No: header is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.request(&sh, "GET", "/shop/card/info?cardNo="+k.CardNo, "", tt.headers...).must(t, tt.status, tt.status)
			if a.Message != tt.msg {
				t.Errorf("message %q, want %q", a.Message, tt.msg)
			}
		})
	}
	// Idempotency-Key in any case is the same header: a retry spelled
	// differently replays the first answer; two spellings at once are twice.
	body := fmt.Sprintf(`{"cardNo":%q,"amount":1,"currency":"USD","direction":"OUT"}`, k.CardNo)
	first := s.request(&sh, "POST", "/shop/card/transfer", body, "idempotency-key", "case-1").must(t, 200, 200)
	again := s.request(&sh, "POST", "/shop/card/transfer", body, "IDEMPOTENCY-KEY", "case-1").must(t, 200, 200)
	if string(first.raw) != string(again.raw) {
		t.Errorf("retry in another case ran again:\n%s\n%s", first.raw, again.raw)
	}
	before := s.journal()
	for _, h := range [][]string{
		{"Idempotency-Key", "a", "idempotency-key", "b"},
		{"Idempotency-Key", "a", "Idempotency-Key", "a"},
	} {
		a := s.request(&sh, "POST", "/shop/card/transfer", body, h...).must(t, 400, 400)
		if !strings.HasPrefix(a.Message, "Idempotency-Key: header must appear once") {
			t.Errorf("%v: message %q", h, a.Message)
		}
	}
	if after := s.journal(); after != before {
		t.Errorf("refused requests changed the journal:\n%s\n%s", before, after)
	}
	if b := s.cardInfo(sh, k.CardNo).Balance.String(); b != "4.00" {
		t.Errorf("card balance %s after one transfer of 1.00", b)
	}
}

// A body over the limit (64 KiB by default) is 413 in the envelope on every
// route, whether it announces its length or is chunked, and changes
// nothing.
func TestBodyLimitEveryRoute(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.testShop() // the sandbox's routes are a test merchant's
	before := s.journal()
	big := `{"cardNo":"` + strings.Repeat("x", BodyBytesMaxDefault) + `"}`
	wantMsg := fmt.Sprintf("body: is larger than %d bytes", BodyBytesMaxDefault)
	for _, route := range s.shopRoutes() {
		method, path, _ := strings.Cut(route, " ")
		// With Content-Length: refused before authentication.
		for _, creds := range []*shop{&sh, nil} {
			a := s.request(creds, method, path, big).must(t, 413, 413)
			if a.Message != wantMsg {
				t.Errorf("%s: message %q", route, a.Message)
			}
		}
		if method != "POST" {
			continue
		}
		// Chunked: the limit bites while the body is read.
		req, err := http.NewRequest(method, s.srv.URL+path, io.NopCloser(strings.NewReader(big)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Shop-No", sh.creds.ShopNo)
		req.Header.Set("X-Public-Key", sh.creds.PublicKey)
		req.Header.Set("Idempotency-Key", "big-"+path)
		if a := s.send(req).must(t, 413, 413); a.Message != wantMsg {
			t.Errorf("%s chunked: message %q", route, a.Message)
		}
	}
	if after := s.journal(); after != before {
		t.Errorf("oversized bodies changed the journal:\n%s\n%s", before, after)
	}
	// A body of exactly the limit is read (and refused for its content).
	exact := `{"cardNo":"` + strings.Repeat("x", BodyBytesMaxDefault-len(`{"cardNo":""}`)) + `"}`
	if len(exact) != BodyBytesMaxDefault {
		t.Fatalf("exact body is %d bytes", len(exact))
	}
	s.request(&sh, "POST", "/shop/card/freeze", exact).must(t, 400, 400)
}

// Secrets at rest: after a card flow, no row of the tables the API writes
// holds the public or the private key in clear, and no card row holds a
// PAN-like digit run (the PAN is sealed, merchant.Sealer; its opening is
// TestCardCreateFundsTheCardAndSealsThePAN's business, not this test's).
func TestSecretsAtRest(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	k := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"5.00"}`)
	s.request(&sh, "POST", "/shop/card/freeze", fmt.Sprintf(`{"cardNo":%q}`, k.CardNo), "Idempotency-Key", "rest-1").must(t, 200, 200)
	for _, table := range []string{"merchants", "cards", "idempotency_keys", "events", "deliveries", "entries"} {
		var rows []string
		err := s.l.DB().NewRaw("select row_to_json(t)::text from "+table+" t").Scan(context.Background(), &rows)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for _, row := range rows {
			for _, secret := range []string{sh.creds.PublicKey, sh.creds.PrivateKey} {
				if strings.Contains(row, secret) {
					t.Errorf("%s holds a key in clear: %s", table, row)
				}
			}
			if table == "cards" {
				// bytea columns (the sealed PAN, its keyed fingerprint) are
				// hex, where digit runs mean nothing.
				if pan := panLike.FindString(byteaHex.ReplaceAllString(row, "")); pan != "" {
					t.Errorf("cards holds a PAN-like number %s: %s", pan, row)
				}
			}
		}
	}
}

var (
	lastAuthenticated = regexp.MustCompile(`"lastAuthenticatedAt":(?:"[^"]*"|null)`)
	panLike           = regexp.MustCompile(`\d{13,19}`)
	byteaHex          = regexp.MustCompile(`\\\\x[0-9a-f]*`)
)
