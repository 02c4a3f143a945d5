package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
)

// The sandbox (docs/api.md, "The sandbox"): a test merchant drives its own
// cards and remittances through the internal API's commands over
// /shop/sandbox; to everyone else those paths do not exist.

// testShop is a test merchant in USD and EUR with 1000.00 of each.
func (s *testServer) testShop() shop {
	s.t.Helper()
	sh := s.newShop(merchant.Spec{Currencies: []string{"USD", "EUR"}, Test: true})
	if !sh.m.Test {
		s.t.Fatal("CreateMerchant with Test returned a live merchant")
	}
	s.deposit(sh, "USD", 100000)
	s.deposit(sh, "EUR", 100000)
	return sh
}

// sbx sends a sandbox POST for sh.
func (s *testServer) sbx(sh shop, path, body string, headers ...string) *answer {
	s.t.Helper()
	return s.request(&sh, "POST", "/shop/sandbox/"+path, body, headers...)
}

func (s *testServer) sbxAuthorize(sh shop, cardNo, amount string) authorizeOut {
	s.t.Helper()
	var out authorizeOut
	s.sbx(sh, "authorize", fmt.Sprintf(`{"cardNo":%q,"amount":%q,"currency":"USD","merchantName":"Blue Bottle","mcc":"5814","merchantCountry":"US"}`,
		cardNo, amount)).must(s.t, 200, 200).into(s.t, &out)
	if !out.Approved || out.AuthID == nil {
		s.t.Fatalf("sandbox authorization of %s not approved: %+v", amount, out)
	}
	return out
}

func (s *testServer) sbxHold(sh shop, path, body string) holdOut {
	s.t.Helper()
	var out holdOut
	s.sbx(sh, path, body).must(s.t, 200, 200).into(s.t, &out)
	return out
}

// headerNames are an answer's header names without those that differ on
// every answer (the request id's value, the date).
func headerNames(h http.Header) string {
	var names []string
	for k, v := range h {
		switch k {
		case "Date":
			continue
		case "X-Request-Id":
			names = append(names, k)
			continue
		}
		names = append(names, k+": "+strings.Join(v, ","))
	}
	sort.Strings(names)
	return strings.Join(names, "\n")
}

// TestSandboxHiddenFromOthers: to a live merchant, a wrong key or no
// credentials, every /shop/sandbox path with any method answers what an
// unknown path answers, byte for byte; a test merchant gets the 405 of a
// wrong method and the 404 of an unknown sandbox path.
func TestSandboxHiddenFromOthers(t *testing.T) {
	s := newTestServer(t, serverOptions{})
	live := s.fundedShop()
	test := s.testShop()
	wrongKey := shop{m: test.m, creds: &merchant.Credentials{ShopNo: test.creds.ShopNo, PublicKey: "pk_wrong"}}
	unknownShop := shop{m: live.m, creds: &merchant.Credentials{ShopNo: "SH0000000000", PublicKey: "pk_x"}}
	body := `{"cardNo":"crd_x","amount":"1.00","currency":"USD"}`
	callers := []struct {
		name string
		sh   *shop
	}{{"live merchant", &live}, {"no credentials", nil}, {"wrong key of a test merchant", &wrongKey}, {"unknown shop", &unknownShop}}
	paths := []string{"authorize", "capture", "reverse", "refund", "remittance/settle", "remittance/return",
		"", "nope", "authorize/", "remittance"}
	for _, c := range callers {
		for _, p := range paths {
			for _, method := range []string{"POST", "GET", "PUT", "DELETE", "PATCH"} {
				got := s.request(c.sh, method, "/shop/sandbox/"+p, body, "Idempotency-Key", "k-1")
				want := s.request(c.sh, method, "/shop/no-such-endpoint", body, "Idempotency-Key", "k-1")
				if got.status != want.status || string(got.raw) != string(want.raw) || headerNames(got.header) != headerNames(want.header) {
					t.Errorf("%s, %s /shop/sandbox/%s: HTTP %d %s\n%s\nan unknown path: HTTP %d %s\n%s", c.name, method, p,
						got.status, got.raw, headerNames(got.header), want.status, want.raw, headerNames(want.header))
				}
			}
		}
	}
	if a := s.request(&live, "POST", "/shop/no-such-endpoint", body); a.status != 404 {
		t.Fatalf("an unknown path answers HTTP %d: %s", a.status, a.raw)
	}
	// The test merchant sees its sandbox.
	s.request(&test, "GET", "/shop/sandbox/authorize", "").must(t, 405, 405)
	s.request(&test, "POST", "/shop/sandbox/nope", body).must(t, 404, 404)
	s.request(&test, "POST", "/shop/sandbox/authorize", body).must(t, 200, codeCardNotFound)
	// And a disabled test merchant is refused as on every /shop path.
	if err := s.l.SetMerchantStatus(context.Background(), test.m.ID, merchant.Disabled); err != nil {
		t.Fatal(err)
	}
	s.request(&test, "POST", "/shop/sandbox/authorize", body).must(t, 403, 403)
}

// TestSandboxSameAsNetwork: the same messages through the sandbox of a test
// merchant and through the internal API for a live merchant give the same
// answers and the same bill lines (one implementation, two front ends).
func TestSandboxSameAsNetwork(t *testing.T) {
	n := newNetServer(t)
	live, test := n.fundedShop(), n.testShop()
	lc := n.createCard(live, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	tc := n.createCard(test, `{"bin":"453201","currency":"USD","amount":"100.00"}`)

	// authorize 10.00, capture 7.50 (2.50 released)
	la := n.approved(lc.CardNo, "10.00", "USD")
	ta := *n.sbxAuthorize(test, tc.CardNo, "10.00").AuthID
	lh := n.hold("/network/clear", n.msg(), la, "7.50", 200)
	th := n.sbxHold(test, "capture", fmt.Sprintf(`{"authId":%q,"amount":"7.50"}`, ta))
	// authorize 5.00, reverse 1.00 then the rest
	la2 := n.approved(lc.CardNo, "5.00", "USD")
	ta2 := *n.sbxAuthorize(test, tc.CardNo, "5.00").AuthID
	lr1 := n.hold("/network/reverse", n.msg(), la2, "1.00", 200)
	tr1 := n.sbxHold(test, "reverse", fmt.Sprintf(`{"authId":%q,"amount":"1.00"}`, ta2))
	lr2 := n.call("POST", "/network/reverse", fmt.Sprintf(`{"messageId":%q,"authId":%q}`, n.msg(), la2)).must(t, 200, 200)
	tr2 := n.sbx(test, "reverse", fmt.Sprintf(`{"authId":%q}`, ta2)).must(t, 200, 200)
	// refund 2.00
	lf := n.call("POST", "/network/refund", fmt.Sprintf(`{"messageId":%q,"cardNo":%q,"amount":"2.00","currency":"USD"}`, n.msg(), lc.CardNo)).must(t, 200, 200)
	tf := n.sbx(test, "refund", fmt.Sprintf(`{"cardNo":%q,"amount":"2.00","currency":"USD"}`, tc.CardNo)).must(t, 200, 200)

	same := func(what string, l, s any, ignore ...string) {
		t.Helper()
		norm := func(v any) map[string]any {
			var b []byte
			switch x := v.(type) {
			case *answer:
				b = x.Data
			default:
				b, _ = json.Marshal(x)
			}
			m := map[string]any{}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range append(ignore, "authId", "cardNo", "createdAt") {
				delete(m, k)
			}
			return m
		}
		lm, sm := norm(l), norm(s)
		if fmt.Sprint(lm) != fmt.Sprint(sm) {
			t.Errorf("%s: network %v, sandbox %v", what, lm, sm)
		}
	}
	same("capture", lh, th)
	same("partial reversal", lr1, tr1)
	same("reversal of the rest", lr2, tr2)
	same("refund", lf, tf)

	lines := func(sh shop, cardNo string) []string {
		var out []string
		day := n.clock.Load().UTC().Format(dateLayout) // the ledger's day, which the test does not move
		for _, l := range n.billAll(sh, day, day) {
			if l.CardNo == cardNo {
				out = append(out, l.Type+" "+l.Amount.String()+" "+l.BalanceAfter.String())
			}
		}
		return out
	}
	lb, tb := lines(live, lc.CardNo), lines(test, tc.CardNo)
	if fmt.Sprint(lb) != fmt.Sprint(tb) || len(tb) < 6 {
		t.Errorf("bill lines of the card:\nnetwork %v\nsandbox %v", lb, tb)
	}
	if k := n.cardInfo(test, tc.CardNo); k.Balance.String() != "94.5" && k.Balance.String() != "94.50" {
		t.Errorf("test card balance %s, want 94.50", k.Balance)
	}
}

// TestSandboxOtherMerchantsObjects: another merchant's card, authorization
// or remittance answers exactly what an unknown one does, and moves
// nothing.
func TestSandboxOtherMerchantsObjects(t *testing.T) {
	s := newTestServer(t, serverOptions{})
	a, b := s.testShop(), s.testShop()
	live := s.fundedShop()
	ac := s.createCard(a, `{"bin":"453201","currency":"USD","amount":"50.00"}`)
	lc := s.createCard(live, `{"bin":"453201","currency":"USD","amount":"50.00"}`)
	authID := *s.sbxAuthorize(a, ac.CardNo, "5.00").AuthID
	tx := s.createRemittance(a, remitBody(benUS, `"10.00"`, "USD", ""))
	lt := s.createRemittance(live, remitBody(benUS, `"10.00"`, "USD", ""))
	unknownCard := "crd_" + strings.Repeat("z", len(ac.CardNo)-4)

	cases := []struct {
		path, theirs, unknown string
		code                  int
	}{
		{"authorize", `{"cardNo":%q,"amount":"1.00","currency":"USD"}`, "", codeCardNotFound},
		{"refund", `{"cardNo":%q,"amount":"1.00","currency":"USD"}`, "", codeCardNotFound},
		{"capture", `{"authId":%q,"amount":"1.00"}`, "auth_unknown0000000000", codeAuthNotFound},
		{"reverse", `{"authId":%q}`, "auth_unknown0000000000", codeAuthNotFound},
		{"remittance/settle", `{"txId":%q}`, "rmt_unknown", codeRemitNotFound},
		{"remittance/return", `{"txId":%q,"reason":"AC04"}`, "rmt_unknown", codeRemitNotFound},
	}
	for _, c := range cases {
		theirs := map[string][]string{
			"authorize": {ac.CardNo, lc.CardNo}, "refund": {ac.CardNo, lc.CardNo},
			"capture": {authID}, "reverse": {authID},
			"remittance/settle": {tx.TxID, lt.TxID}, "remittance/return": {tx.TxID, lt.TxID},
		}[c.path]
		unknown := c.unknown
		if unknown == "" {
			unknown = unknownCard
		}
		want := s.sbx(b, c.path, fmt.Sprintf(c.theirs, unknown)).must(t, 200, c.code)
		for _, id := range theirs {
			got := s.sbx(b, c.path, fmt.Sprintf(c.theirs, id)).must(t, 200, c.code)
			if string(got.raw) != string(want.raw) {
				t.Errorf("%s of another merchant's %s: %s; of an unknown one: %s", c.path, id, got.raw, want.raw)
			}
		}
	}
	if k := s.cardInfo(a, ac.CardNo); k.Balance.String() != "45" && k.Balance.String() != "45.00" {
		t.Errorf("the card of A moved: balance %s", k.Balance)
	}
}

// TestSandboxIdempotencyAndBounds: the Idempotency-Key of every /shop POST
// (a repeat is the first answer and moves nothing again; a key is one
// request's), and the internal API's validation and network bounds.
func TestSandboxIdempotencyAndBounds(t *testing.T) {
	s := newTestServer(t, serverOptions{})
	sh := s.testShop()
	k := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	body := fmt.Sprintf(`{"cardNo":%q,"amount":"10.00","currency":"USD"}`, k.CardNo)

	first := s.sbx(sh, "authorize", body, "Idempotency-Key", "auth-1").must(t, 200, 200)
	again := s.sbx(sh, "authorize", body, "Idempotency-Key", "auth-1").must(t, 200, 200)
	if string(first.Data) != string(again.Data) {
		t.Errorf("a repeat answered %s, the first %s", again.Data, first.Data)
	}
	if c := s.cardInfo(sh, k.CardNo); c.Held.String() != "10" && c.Held.String() != "10.00" {
		t.Errorf("held %s after an authorization and its repeat, want 10.00", c.Held)
	}
	other := fmt.Sprintf(`{"cardNo":%q,"amount":"11.00","currency":"USD"}`, k.CardNo)
	s.sbx(sh, "authorize", other, "Idempotency-Key", "auth-1").must(t, 200, codeIdemConflict)
	s.request(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":"1.00"}`, "Idempotency-Key", "card-1").must(t, 200, 200)
	s.sbx(sh, "authorize", body, "Idempotency-Key", "card-1").must(t, 200, codeIdemConflict)
	s.request(&sh, "POST", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":"1.00"}`, "Idempotency-Key", "auth-1").must(t, 200, codeIdemConflict)
	var auth authorizeOut
	first.into(t, &auth)
	// Two merchants' equal keys are two messages.
	sh2 := s.testShop()
	k2 := s.createCard(sh2, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	var auth2 authorizeOut
	s.sbx(sh2, "authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"10.00","currency":"USD"}`, k2.CardNo), "Idempotency-Key", "auth-1").
		must(t, 200, 200).into(t, &auth2)
	if !auth2.Approved || *auth2.AuthID == *auth.AuthID {
		t.Errorf("the second merchant's authorization with an equal key: %+v", auth2)
	}

	// Validation: the internal API's, field by field, and no messageId.
	for _, c := range []struct{ path, body, field string }{
		{"authorize", fmt.Sprintf(`{"messageId":"m1","cardNo":%q,"amount":"1.00","currency":"USD"}`, k.CardNo), "messageId"},
		{"authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"1.001","currency":"USD"}`, k.CardNo), "amount"},
		{"authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"XXQ"}`, k.CardNo), "currency"},
		{"authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"USD","mcc":"58a4"}`, k.CardNo), "mcc"},
		{"authorize", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"USD","merchantName":"a\u0007b"}`, k.CardNo), "merchantName"},
		{"authorize", `{"cardNo":"crd x","amount":"1.00","currency":"USD"}`, "cardNo"},
		{"capture", fmt.Sprintf(`{"authId":%q}`, *auth.AuthID), "amount"},
		{"capture", fmt.Sprintf(`{"authId":%q,"amount":"0.001"}`, *auth.AuthID), "amount"},
		{"reverse", fmt.Sprintf(`{"authId":%q,"amount":"10.01"}`, *auth.AuthID), "amount"},
		{"refund", fmt.Sprintf(`{"cardNo":%q,"amount":"-1","currency":"USD"}`, k.CardNo), "amount"},
		{"remittance/settle", `{"txId":"rmt x"}`, "txId"},
		{"remittance/settle", `{"txId":"rmt_1","reason":"AC01"}`, "reason"},
		{"remittance/return", `{"txId":"rmt_1"}`, "reason"},
		{"remittance/return", `{"txId":"rmt_1","reason":"free text"}`, "reason"},
	} {
		a := s.sbx(sh, c.path, c.body).must(t, 400, 400)
		if !strings.Contains(a.Message, c.field) {
			t.Errorf("%s %s: message %q does not name %s", c.path, c.body, a.Message, c.field)
		}
	}

	// The network bounds (docs/network.md, "Bounds"): 20 % over-capture,
	// refunds matched by captures.
	s.sbx(sh, "capture", fmt.Sprintf(`{"authId":%q,"amount":"12.01"}`, *auth.AuthID)).must(t, 200, codeLimitExceeded)
	fresh := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"5.00"}`)
	s.sbx(sh, "refund", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"USD"}`, fresh.CardNo)).must(t, 200, codeLimitExceeded)
	h := s.sbxHold(sh, "capture", fmt.Sprintf(`{"authId":%q,"amount":"12.00"}`, *auth.AuthID))
	if h.Status != network.AuthCleared {
		t.Errorf("capture within the tolerance: %+v", h)
	}
	s.sbx(sh, "capture", fmt.Sprintf(`{"authId":%q,"amount":"1.00"}`, *auth.AuthID)).must(t, 200, codeAuthClosed)
}

// TestSandboxRemittances: a test merchant's remittance waits in flight for
// its sandbox (the simulated rail leaves it), then settles or comes back
// as the rail's report makes it; a live one is settled by the rail.
func TestSandboxRemittances(t *testing.T) {
	s := newTestServer(t, serverOptions{})
	sh, live := s.testShop(), s.fundedShop()
	w := s.remitWorker()
	settled := s.createRemittance(sh, remitBody(benUS, `"100.00"`, "USD", ""))
	returned := s.createRemittance(sh, remitBody(benUS, `"50.00"`, "USD", ""))
	liveTx := s.createRemittance(live, remitBody(benUS, `"100.00"`, "USD", ""))
	// Too early: still SUBMITTED.
	s.sbx(sh, "remittance/settle", fmt.Sprintf(`{"txId":%q}`, settled.TxID)).must(t, 200, codeFailure)
	s.settle(w)
	for _, tx := range []string{settled.TxID, returned.TxID} {
		if r, _ := s.queryRemittance(sh, tx); r.Status != "IN_FLIGHT" {
			t.Fatalf("test remittance %s is %s after the worker, want IN_FLIGHT (left to the sandbox)", tx, r.Status)
		}
	}
	if r, _ := s.queryRemittance(live, liveTx.TxID); r.Status != "SETTLED" {
		t.Fatalf("live remittance %s after the worker, want SETTLED by the rail", r.Status)
	}
	before := s.fundingBalance(sh, "USD")

	type reportOut struct {
		TxID      string  `json:"txId"`
		Status    string  `json:"status"`
		Reason    *string `json:"reason"`
		SettledAt *string `json:"settledAt"`
	}
	var out reportOut
	s.sbx(sh, "remittance/settle", fmt.Sprintf(`{"txId":%q}`, settled.TxID), "Idempotency-Key", "settle-1").must(t, 200, 200).into(t, &out)
	if out.Status != "SETTLED" || out.SettledAt == nil || out.Reason != nil {
		t.Errorf("settle: %+v", out)
	}
	s.sbx(sh, "remittance/settle", fmt.Sprintf(`{"txId":%q}`, settled.TxID), "Idempotency-Key", "settle-1").must(t, 200, 200)
	s.sbx(sh, "remittance/return", fmt.Sprintf(`{"txId":%q,"reason":"AC04"}`, settled.TxID)).must(t, 200, codeFailure)
	s.sbx(sh, "remittance/return", fmt.Sprintf(`{"txId":%q,"reason":"AC04"}`, returned.TxID)).must(t, 200, 200).into(t, &out)
	if out.Status != "RETURNED" || out.Reason == nil || *out.Reason != "AC04" {
		t.Errorf("return: %+v", out)
	}
	if r, _ := s.queryRemittance(sh, returned.TxID); r.Status != "RETURNED" || r.Reason != "AC04" {
		t.Errorf("query after the return: %+v", r)
	}
	// The return gave the amount back (the fee is kept).
	if after := s.fundingBalance(sh, "USD"); after == before {
		t.Errorf("funding %s before and after the return", after)
	}
	s.settle(w)
}

// TestSandboxMoneyApart: the test merchant's capture lands on its own
// network settlement account, and settlement reconciliation never sees it.
func TestSandboxMoneyApart(t *testing.T) {
	n := newNetServer(t)
	ctx := context.Background()
	live, test := n.fundedShop(), n.testShop()
	lc := n.createCard(live, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	tc := n.createCard(test, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	la := n.approved(lc.CardNo, "10.00", "USD")
	ta := *n.sbxAuthorize(test, tc.CardNo, "20.00").AuthID
	n.hold("/network/clear", n.msg(), la, "10.00", 200)
	n.sbxHold(test, "capture", fmt.Sprintf(`{"authId":%q,"amount":"20.00"}`, ta))

	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	got, err := n.l.Network.SettlementsBetween(ctx, from, to, network.SettlementCursor{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].AuthID != la {
		t.Errorf("settlements between: %+v, want the live clearing only", got)
	}
	byAuth, err := n.l.Network.SettlementsByAuth(ctx, []string{la, ta})
	if err != nil {
		t.Fatal(err)
	}
	// The test clearing is found but marked as a test merchant's, so that a
	// settlement file claiming it is told so (test_merchant), never matched
	// against live money.
	if !byAuth[0].Found || byAuth[0].Test || !byAuth[1].Found || !byAuth[1].Test {
		t.Errorf("settlements by auth: %+v, want the live one found and the test one found as a test merchant's", byAuth)
	}
	var addrs []string
	if err := n.l.DB().NewRaw(`select a.address from accounts a join balances b on b.account_id = a.id
		where a.type = 'network_settlement' and b.balance <> 0 order by a.merchant_id`).Scan(ctx, &addrs); err != nil {
		t.Fatal(err)
	}
	want := []string{fmt.Sprintf("m:%d:network_settlement:USD", live.m.ID), fmt.Sprintf("m:%d:network_settlement:USD", test.m.ID)}
	if fmt.Sprint(addrs) != fmt.Sprint(want) {
		t.Errorf("network settlement accounts %v, want %v", addrs, want)
	}
	// The flag is for ever.
	if _, err := n.l.DB().ExecContext(ctx, `update merchants set test = false where id = ?`, test.m.ID); err == nil {
		t.Error("a test merchant became live")
	}
	if _, err := n.l.DB().ExecContext(ctx, `update merchants set test = true where id = ?`, live.m.ID); err == nil {
		t.Error("a live merchant became a test merchant")
	}
	// Paged one at a time, with a live clearing after the test one: the
	// page that met the test clearing reads on to the live one rather than
	// coming back short, which would end the listing early.
	lb := n.approved(lc.CardNo, "5.00", "USD")
	n.hold("/network/clear", n.msg(), lb, "5.00", 200)
	var paged []string
	for after := (network.SettlementCursor{}); ; {
		page, err := n.l.Network.SettlementsBetween(ctx, from, to, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page[0].AuthID)
		after = network.SettlementCursor{CreatedAt: page[0].CreatedAt, EntryID: page[0].EntryID}
	}
	if fmt.Sprint(paged) != fmt.Sprint([]string{la, lb}) {
		t.Errorf("settlements between, a page of 1 at a time: %v, want the live clearings %v", paged, []string{la, lb})
	}
}
