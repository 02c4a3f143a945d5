package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/railsim"
	"github.com/paygate/gateway/internal/remittance"
)

// The internal network API over HTTPS, beside the /shop server on the same
// fresh database and ledger (newTestServer checks ledger verification after
// every test).

const testInternalToken = "itk_test-token-0123456789abcdef"

// netServer is the /shop server plus the internal API, with the ledger's
// clock in the test's hands.
type netServer struct {
	*testServer
	internal *testServer // the same ledger, answering on the internal listener
	clock    *atomic.Pointer[time.Time]
	seq      atomic.Int64
}

func newNetServer(t *testing.T) *netServer {
	t.Helper()
	clock := &atomic.Pointer[time.Time]{}
	start := time.Now().UTC()
	clock.Store(&start)
	s := newTestServer(t, serverOptions{ledgerNow: func() time.Time { return *clock.Load() }})
	isrv := httptest.NewUnstartedServer(NewInternalServer(PartnerDeps{
		Log: slog.New(slog.NewJSONHandler(s.logs, nil)), Network: s.l.Network, Rails: s.l.Remit, Token: testInternalToken,
	}))
	isrv.StartTLS()
	t.Cleanup(isrv.Close)
	internal := *s
	internal.srv, internal.client = isrv, isrv.Client()
	return &netServer{testServer: s, internal: &internal, clock: clock}
}

func (n *netServer) advance(d time.Duration) {
	t := n.clock.Load().Add(d)
	n.clock.Store(&t)
}

func (n *netServer) msg() string { return fmt.Sprintf("msg-%d", n.seq.Add(1)) }

// call sends a request to the internal API with the test token.
func (n *netServer) call(method, path, body string) *answer {
	n.t.Helper()
	return n.icall(method, path, body, "Authorization", "Bearer "+testInternalToken)
}

// authorizeOut and holdOut are the answers as a client reads them.
type authorizeOut struct {
	AuthID       *string      `json:"authId"`
	Approved     bool         `json:"approved"`
	Code         string       `json:"code"`
	Reason       string       `json:"reason"`
	CardNo       string       `json:"cardNo"`
	Amount       json.Number  `json:"amount"`
	Currency     string       `json:"currency"`
	CardAmount   *json.Number `json:"cardAmount"`
	Fee          *json.Number `json:"fee"`
	CardCurrency *string      `json:"cardCurrency"`
	FXRate       *json.Number `json:"fxRate"`
	Available    *json.Number `json:"available"`
	CreatedAt    string       `json:"createdAt"`
}

type holdOut struct {
	AuthID     string      `json:"authId"`
	CardNo     string      `json:"cardNo"`
	Status     string      `json:"status"`
	Currency   string      `json:"currency"`
	Captured   json.Number `json:"captured"`
	Fee        json.Number `json:"fee"`
	Released   json.Number `json:"released"`
	Receivable json.Number `json:"receivable"`
	Held       json.Number `json:"held"`
	Available  json.Number `json:"available"`
	CreatedAt  string      `json:"createdAt"`
}

func (n *netServer) authorizeWith(msg, cardNo, amount, currency string) (authorizeOut, *answer) {
	n.t.Helper()
	a := n.call("POST", "/network/authorize", fmt.Sprintf(
		`{"messageId":%q,"cardNo":%q,"amount":%s,"currency":%q,"merchantName":"Blue Bottle","mcc":"5814","merchantCountry":"US"}`,
		msg, cardNo, amount, currency)).must(n.t, 200, 200)
	var out authorizeOut
	a.into(n.t, &out)
	if !timestampRE.MatchString(out.CreatedAt) || out.CardNo != cardNo || out.Currency != currency || out.Amount.String() != amount {
		n.t.Errorf("authorize echoes %s", a.raw)
	}
	return out, a
}

func (n *netServer) authorize(cardNo, amount, currency string) authorizeOut {
	n.t.Helper()
	out, _ := n.authorizeWith(n.msg(), cardNo, amount, currency)
	return out
}

// approved authorizes and requires an approval; it returns the auth id.
func (n *netServer) approved(cardNo, amount, currency string) string {
	n.t.Helper()
	out := n.authorize(cardNo, amount, currency)
	if !out.Approved || out.Code != "00" || out.AuthID == nil {
		n.t.Fatalf("authorization of %s %s not approved: %+v", amount, currency, out)
	}
	return *out.AuthID
}

func (n *netServer) hold(path, msg, authID, amount string, code int) holdOut {
	n.t.Helper()
	body := fmt.Sprintf(`{"messageId":%q,"authId":%q,"amount":%s}`, msg, authID, amount)
	if amount == "" {
		body = fmt.Sprintf(`{"messageId":%q,"authId":%q}`, msg, authID)
	}
	a := n.call("POST", path, body).must(n.t, 200, code)
	var out holdOut
	if code == codeOK {
		a.into(n.t, &out)
	}
	return out
}

func (n *netServer) clear(authID, amount string) holdOut {
	n.t.Helper()
	return n.hold("/network/clear", n.msg(), authID, amount, codeOK)
}

func (n *netServer) reverse(authID, amount string) holdOut {
	n.t.Helper()
	return n.hold("/network/reverse", n.msg(), authID, amount, codeOK)
}

// balances is the card's available and held, as /shop/card/balance shows
// them (and /shop/card/info, which must agree).
func (n *netServer) balances(sh shop, cardNo string) (avail, held string) {
	n.t.Helper()
	var b struct {
		Balance json.Number `json:"balance"`
		Held    json.Number `json:"held"`
	}
	n.request(&sh, "GET", "/shop/card/balance?cardNo="+cardNo, "").must(n.t, 200, 200).into(n.t, &b)
	info := n.cardInfo(sh, cardNo)
	if info.Balance != b.Balance || info.Held != b.Held {
		n.t.Errorf("card info %s/%s, balance %s/%s", info.Balance, info.Held, b.Balance, b.Held)
	}
	return b.Balance.String(), b.Held.String()
}

func (n *netServer) wantBalances(sh shop, cardNo, avail, held string) {
	n.t.Helper()
	if a, h := n.balances(sh, cardNo); a != avail || h != held {
		n.t.Errorf("card available %s held %s, want %s and %s", a, h, avail, held)
	}
}

// wantReceivables checks what GET /shop/card/info says the card owes and
// the receivables of GET /shop/account, as raw JSON.
func (n *netServer) wantReceivables(sh shop, cardNo, card, account string) {
	n.t.Helper()
	var info struct {
		Receivable json.Number `json:"receivable"`
	}
	n.request(&sh, "GET", "/shop/card/info?cardNo="+cardNo, "").must(n.t, 200, 200).into(n.t, &info)
	var acct struct {
		Receivables json.RawMessage `json:"receivables"`
	}
	n.request(&sh, "GET", "/shop/account", "").must(n.t, 200, 200).into(n.t, &acct)
	if info.Receivable.String() != card || string(acct.Receivables) != account {
		n.t.Errorf("card receivable %s, account receivables %s; want %s and %s", info.Receivable, acct.Receivables, card, account)
	}
}

func (n *netServer) countEntries(kind string) int {
	n.t.Helper()
	var k int
	if err := n.l.DB().NewRaw(`select count(*) from entries where kind = ?`, kind).Scan(context.Background(), &k); err != nil {
		n.t.Fatal(err)
	}
	return k
}

func TestNetworkAuthorizationDecisions(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.fundedShop()
	k := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	cardNo := fmt.Sprintf(`{"cardNo":%q}`, k.CardNo)

	// Frozen: declined 57, a decision (code 200) that moves nothing.
	n.request(&sh, "POST", "/shop/card/freeze", cardNo).must(t, 200, 200)
	d, a := n.authorizeWith(n.msg(), k.CardNo, "10.00", "USD")
	if d.Approved || d.Code != "57" || d.AuthID != nil || d.Reason == "" || d.CardAmount != nil ||
		d.Available == nil || d.Available.String() != "100.00" || d.FXRate != nil {
		t.Errorf("frozen: %s", a.raw)
	}
	n.wantBalances(sh, k.CardNo, "100.00", "0.00")
	// Unfrozen: approved, the amount moves from available to held.
	n.request(&sh, "POST", "/shop/card/unfreeze", cardNo).must(t, 200, 200)
	d, a = n.authorizeWith(n.msg(), k.CardNo, "10.00", "USD")
	if !d.Approved || d.Code != "00" || d.AuthID == nil || !strings.HasPrefix(*d.AuthID, "auth_") ||
		d.CardAmount.String() != "10.00" || d.Fee.String() != "0.00" || *d.CardCurrency != "USD" || d.Available.String() != "90.00" {
		t.Errorf("unfrozen: %s", a.raw)
	}
	n.wantBalances(sh, k.CardNo, "90.00", "10.00")
	// Insufficient available balance: 51.
	if d := n.authorize(k.CardNo, "90.01", "USD"); d.Approved || d.Code != "51" || d.CardAmount.String() != "90.01" {
		t.Errorf("insufficient: %+v", d)
	}
	// Unknown card: 14, and nothing about a card.
	d, a = n.authorizeWith(n.msg(), "crd_nosuchcard0000000000", "1.00", "USD")
	if d.Approved || d.Code != "14" || d.CardCurrency != nil || d.Available != nil {
		t.Errorf("unknown: %s", a.raw)
	}
	// Another currency than the card's: converted at the mid rate with the
	// 1.5% cross-border fee held with it.
	if _, err := n.l.FX.Set(context.Background(), "EUR", "USD", "1.10", 50); err != nil {
		t.Fatal(err)
	}
	d, a = n.authorizeWith(n.msg(), k.CardNo, "20.00", "EUR")
	xAuth := *d.AuthID
	if !d.Approved || d.CardAmount.String() != "22.00" || d.Fee.String() != "0.33" || d.FXRate == nil ||
		d.FXRate.String() != "1.1" || d.Available.String() != "67.67" {
		t.Errorf("cross-currency: %s", a.raw)
	}
	n.wantBalances(sh, k.CardNo, "67.67", "32.33")
	// Cancelled: 46. The open holds stay.
	n.request(&sh, "POST", "/shop/card/cancel", cardNo).must(t, 200, 200)
	if d := n.authorize(k.CardNo, "1.00", "USD"); d.Approved || d.Code != "46" {
		t.Errorf("cancelled: %+v", d)
	}
	n.wantBalances(sh, k.CardNo, "0.00", "32.33")

	// Every attempt is listed with its code, newest first.
	var list struct {
		List []struct {
			MessageID string       `json:"messageId"`
			Approved  bool         `json:"approved"`
			Code      string       `json:"code"`
			Reason    string       `json:"reason"`
			AuthID    *string      `json:"authId"`
			Status    *string      `json:"status"`
			Amount    *json.Number `json:"amount"`
			Currency  string       `json:"currency"`
			MCC       *string      `json:"mcc"`
			CreatedAt string       `json:"createdAt"`
		} `json:"list"`
	}
	n.call("GET", "/network/authorizations?cardNo="+k.CardNo, "").must(t, 200, 200).into(t, &list)
	var codes []string
	for _, x := range list.List {
		codes = append(codes, x.Code)
		if x.Approved != (x.AuthID != nil) || x.Approved != (x.Status != nil) || x.Reason == "" || x.Amount == nil || *x.MCC != "5814" {
			t.Errorf("attempt %+v", x)
		}
	}
	if strings.Join(codes, ",") != "46,00,51,00,57" {
		t.Errorf("attempts %v, want 46,00,51,00,57", codes)
	}
	n.call("GET", "/network/authorizations?cardNo="+k.CardNo+"&limit=2", "").must(t, 200, 200).into(t, &list)
	if len(list.List) != 2 || list.List[0].Code != "46" {
		t.Errorf("limit 2: %+v", list.List)
	}
	n.call("GET", "/network/authorizations?cardNo="+k.CardNo+"&limit=501", "").must(t, 400, 400)
	n.call("GET", "/network/authorizations", "").must(t, 400, 400)
	n.call("GET", "/network/authorizations?cardNo=crd_nosuchcard0000000000", "").must(t, 200, 200).into(t, &list)
	if len(list.List) != 1 || list.List[0].Code != "14" {
		t.Errorf("unknown card's attempts %+v", list.List)
	}

	// The authorization itself.
	var auth struct {
		AuthID       string      `json:"authId"`
		Status       string      `json:"status"`
		Amount       json.Number `json:"amount"`
		Currency     string      `json:"currency"`
		CardAmount   json.Number `json:"cardAmount"`
		Fee          json.Number `json:"fee"`
		CardCurrency string      `json:"cardCurrency"`
		Held         json.Number `json:"held"`
		ExpiresAt    string      `json:"expiresAt"`
	}
	n.call("GET", "/network/authorizations/auth_nosuchauth000000000", "").must(t, 200, codeAuthNotFound)
	n.call("GET", "/network/authorizations/"+xAuth, "").must(t, 200, 200).into(t, &auth)
	if auth.Status != "OPEN" || auth.Amount.String() != "20.00" || auth.Currency != "EUR" || auth.CardAmount.String() != "22.00" ||
		auth.Fee.String() != "0.33" || auth.CardCurrency != "USD" || auth.Held.String() != "22.33" || !timestampRE.MatchString(auth.ExpiresAt) {
		t.Errorf("authorization %+v", auth)
	}
}

func TestNetworkValidation(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.fundedShop()
	k := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"10.00"}`)
	for _, tt := range []struct{ path, body, field string }{
		{"/network/authorize", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":"1.005","currency":"USD"}`, "amount"},
		{"/network/authorize", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":1.5,"currency":"JPY"}`, "amount"},
		{"/network/authorize", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":-1,"currency":"USD"}`, "amount"},
		{"/network/authorize", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":1,"currency":"usd"}`, "currency"},
		{"/network/authorize", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":1,"currency":"USD","mcc":"58"}`, "mcc"},
		{"/network/authorize", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":1,"currency":"USD","merchantCountry":"usa"}`, "merchantCountry"},
		{"/network/authorize", `{"messageId":"m 1","cardNo":"` + k.CardNo + `","amount":1,"currency":"USD"}`, "messageId"},
		{"/network/authorize", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":1,"currency":"USD","pan":"4111"}`, "pan"},
		{"/network/authorize", `{"messageId":"m1","amount":1,"currency":"USD"}`, "cardNo"},
		{"/network/clear", `{"messageId":"m1","authId":"auth_x"}`, "amount"},
		{"/network/reverse", `{"messageId":"m1","authId":"auth x"}`, "authId"},
		{"/network/refund", `{"messageId":"m1","cardNo":"` + k.CardNo + `","amount":"0","currency":"USD"}`, "amount"},
	} {
		a := n.call("POST", tt.path, tt.body).must(t, 400, 400)
		if !strings.HasPrefix(a.Message, tt.field+": ") {
			t.Errorf("%s %s: message %q does not name %s", tt.path, tt.body, a.Message, tt.field)
		}
	}
	// The amount of a clearing is in the authorization's currency.
	id := n.approved(k.CardNo, "5.00", "USD")
	a := n.call("POST", "/network/clear", `{"messageId":"c1","authId":"`+id+`","amount":"1.001"}`).must(t, 400, 400)
	if !strings.HasPrefix(a.Message, "amount: USD allows at most 2 decimals") {
		t.Errorf("clear: %s", a.Message)
	}
	n.call("POST", "/network/reverse", `{"messageId":"r1","authId":"`+id+`","amount":""}`).must(t, 400, 400)
	n.call("POST", "/network/clear", `{"messageId":"c1","authId":"auth_nosuchauth000000000","amount":1}`).must(t, 200, codeAuthNotFound)
	n.call("POST", "/network/reverse", `{"messageId":"r1","authId":"auth_nosuchauth000000000"}`).must(t, 200, codeAuthNotFound)
	n.call("POST", "/network/refund", `{"messageId":"f1","cardNo":"crd_nosuchcard0000000000","amount":1,"currency":"USD"}`).must(t, 200, codeCardNotFound)
	n.call("POST", "/network/refund", `{"messageId":"f2","cardNo":"`+k.CardNo+`","amount":1,"currency":"EUR"}`).must(t, 400, 400)
	// Nothing moved but the one hold.
	n.wantBalances(sh, k.CardNo, "5.00", "5.00")
}

func TestNetworkCaptures(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.fundedShop()
	k := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`)

	// Above the largest network message of USD (1,000,000.00 by default):
	// declined 13, whatever the card holds.
	if out := n.authorize(k.CardNo, "1000000.01", "USD"); out.Approved || out.Code != "13" {
		t.Errorf("above the largest message: %+v", out)
	}
	// Partial: 20.00 of a 30.00 hold is paid, 10.00 released.
	id := n.approved(k.CardNo, "30.00", "USD")
	h := n.clear(id, "20.00")
	if h.Status != "CLEARED" || h.Captured.String() != "20.00" || h.Released.String() != "10.00" || h.Held.String() != "0.00" ||
		h.Receivable.String() != "0.00" || h.Available.String() != "80.00" || h.Fee.String() != "0.00" {
		t.Errorf("partial: %+v", h)
	}
	n.wantBalances(sh, k.CardNo, "80.00", "0.00")
	// Exact.
	id = n.approved(k.CardNo, "10.00", "USD")
	if h := n.clear(id, "10.00"); h.Captured.String() != "10.00" || h.Released.String() != "0.00" || h.Available.String() != "70.00" {
		t.Errorf("exact: %+v", h)
	}
	// Above the hold: 12.00 on a 10.00 hold (the 20 % over-capture
	// tolerance) takes 2.00 from available; 12.01 is refused and leaves
	// the hold open.
	id = n.approved(k.CardNo, "10.00", "USD")
	n.hold("/network/clear", n.msg(), id, "12.01", codeLimitExceeded)
	if h := n.clear(id, "12.00"); h.Captured.String() != "12.00" || h.Available.String() != "58.00" || h.Receivable.String() != "0.00" {
		t.Errorf("over: %+v", h)
	}
	// Above everything, on a frozen card emptied by a transfer OUT: the
	// capture succeeds and the rest is carried on the card's receivable,
	// which the card's info and the merchant's account show.
	id = n.approved(k.CardNo, "50.00", "USD")
	n.request(&sh, "POST", "/shop/card/freeze", fmt.Sprintf(`{"cardNo":%q}`, k.CardNo)).must(t, 200, 200)
	n.request(&sh, "POST", "/shop/card/transfer", fmt.Sprintf(`{"cardNo":%q,"amount":"8.00","currency":"USD","direction":"OUT"}`, k.CardNo)).must(t, 200, 200)
	if h := n.clear(id, "60.00"); h.Captured.String() != "60.00" || h.Available.String() != "0.00" || h.Receivable.String() != "10.00" {
		t.Errorf("over the card: %+v", h)
	}
	n.wantBalances(sh, k.CardNo, "0.00", "0.00")
	n.wantReceivables(sh, k.CardNo, "10.00", `[{"currency":"USD","amount":10.00},{"currency":"EUR","amount":0.00}]`)
	// A refund repays the receivable first.
	var r struct {
		Credited  string      `json:"credited"`
		Amount    json.Number `json:"amount"`
		Available json.Number `json:"available"`
	}
	n.call("POST", "/network/refund", fmt.Sprintf(`{"messageId":"ref-1","cardNo":%q,"amount":"50.00","currency":"USD"}`, k.CardNo)).
		must(t, 200, 200).into(t, &r)
	if r.Credited != "card" || r.Amount.String() != "50.00" || r.Available.String() != "40.00" {
		t.Errorf("refund %+v", r)
	}
	n.wantBalances(sh, k.CardNo, "40.00", "0.00")
	n.wantReceivables(sh, k.CardNo, "0.00", `[{"currency":"USD","amount":0.00},{"currency":"EUR","amount":0.00}]`)

	// Cross-currency: the fee is booked on what is captured.
	if _, err := n.l.FX.Set(context.Background(), "EUR", "USD", "1.10", 50); err != nil {
		t.Fatal(err)
	}
	k2 := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	id = n.approved(k2.CardNo, "20.00", "EUR") // 22.00 + 0.33 held
	if h := n.clear(id, "10.00"); h.Captured.String() != "11.00" || h.Fee.String() != "0.17" || h.Released.String() != "11.16" ||
		h.Available.String() != "88.83" {
		t.Errorf("cross-currency capture: %+v", h)
	}
	if n.countEntries("FEE") != 1 {
		t.Errorf("%d FEE entries, want 1", n.countEntries("FEE"))
	}
}

func TestNetworkExpiry(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.fundedShop()
	k := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	old := n.approved(k.CardNo, "10.00", "USD")
	n.advance(6 * 24 * time.Hour)
	young := n.approved(k.CardNo, "20.00", "USD")
	n.wantBalances(sh, k.CardNo, "70.00", "30.00")
	ctx := context.Background()
	if got, err := n.l.Network.ExpireHolds(ctx, 0); err != nil || got != 0 {
		t.Fatalf("ExpireHolds after 6 days: %d %v", got, err)
	}
	n.advance(1*24*time.Hour + time.Minute) // the first hold is 7 days old
	if got, err := n.l.Network.ExpireHolds(ctx, 0); err != nil || got != 1 {
		t.Fatalf("ExpireHolds after 7 days: %d %v", got, err)
	}
	if got, _ := n.l.Network.ExpireHolds(ctx, 0); got != 0 {
		t.Fatalf("a second ExpireHolds released %d", got)
	}
	n.wantBalances(sh, k.CardNo, "80.00", "20.00")
	var auth struct {
		Status         string
		Held, Released json.Number
	}
	n.call("GET", "/network/authorizations/"+old, "").must(t, 200, 200).into(t, &auth)
	if auth.Status != "EXPIRED" || auth.Held != "0.00" || auth.Released != "10.00" {
		t.Errorf("expired authorization %+v", auth)
	}
	// An expired hold can no longer be captured or reversed.
	n.hold("/network/clear", n.msg(), old, "10.00", codeAuthClosed)
	n.hold("/network/reverse", n.msg(), old, "", codeAuthClosed)
	// The younger one is still open and clears normally.
	if h := n.clear(young, "20.00"); h.Status != "CLEARED" {
		t.Errorf("young: %+v", h)
	}
	n.wantBalances(sh, k.CardNo, "80.00", "0.00")
}

// Refund before and after the card is cancelled, and an open hold of a
// cancelled card: what it releases goes to the funding account.
func TestNetworkCancelledCard(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.fundedShop()
	k := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`) // funding 900.00
	refund := func(msg, amount string) (credited, available string) {
		var r struct {
			Credited  string      `json:"credited"`
			Available json.Number `json:"available"`
		}
		n.call("POST", "/network/refund", fmt.Sprintf(`{"messageId":%q,"cardNo":%q,"amount":%q,"currency":"USD"}`, msg, k.CardNo, amount)).
			must(t, 200, 200).into(t, &r)
		return r.Credited, r.Available.String()
	}
	// A purchase of 12.00, captured: refunds are matched against it.
	n.clear(n.approved(k.CardNo, "12.00", "USD"), "12.00")
	if c, a := refund("refund-1", "5.00"); c != "card" || a != "93.00" {
		t.Errorf("refund before cancel: %s %s", c, a)
	}
	n.wantBalances(sh, k.CardNo, "93.00", "0.00")
	reversed := n.approved(k.CardNo, "30.00", "USD")
	cleared := n.approved(k.CardNo, "25.00", "USD")
	n.request(&sh, "POST", "/shop/card/cancel", fmt.Sprintf(`{"cardNo":%q}`, k.CardNo)).must(t, 200, 200)
	// The available 38.00 went back; 55.00 is still held.
	n.wantBalances(sh, k.CardNo, "0.00", "55.00")
	if got := n.fundingBalance(sh, "USD"); got != "938.00" {
		t.Errorf("funding after cancel %s", got)
	}
	if c, _ := refund("refund-2", "7.00"); c != "funding" {
		t.Errorf("refund after cancel credited %s", c)
	}
	if got := n.fundingBalance(sh, "USD"); got != "945.00" {
		t.Errorf("funding after the refund %s", got)
	}
	// The 12.00 captured are refunded: one cent more is refused.
	n.call("POST", "/network/refund", fmt.Sprintf(`{"messageId":"refund-3","cardNo":%q,"amount":"0.01","currency":"USD"}`, k.CardNo)).
		must(t, 200, codeLimitExceeded)
	// A reversal on the cancelled card releases to the funding account.
	if h := n.reverse(reversed, ""); h.Status != "REVERSED" || h.Released.String() != "30.00" || h.Available.String() != "0.00" {
		t.Errorf("reverse: %+v", h)
	}
	if got := n.fundingBalance(sh, "USD"); got != "975.00" {
		t.Errorf("funding after the reversal %s", got)
	}
	// A partial capture still succeeds; the rest goes to funding.
	if h := n.clear(cleared, "20.00"); h.Status != "CLEARED" || h.Captured.String() != "20.00" || h.Released.String() != "5.00" {
		t.Errorf("clear: %+v", h)
	}
	if got := n.fundingBalance(sh, "USD"); got != "980.00" {
		t.Errorf("funding after the clearing %s", got)
	}
	n.wantBalances(sh, k.CardNo, "0.00", "0.00")
}

// Every message has exactly one effect: a repeated message id answers the
// first answer; a second reversal, a second capture and a capture after a
// reversal are refused.
func TestNetworkExactlyOnce(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.fundedShop()
	k := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`)

	// A repeated authorization.
	first, a1 := n.authorizeWith("auth-msg-1", k.CardNo, "10.00", "USD")
	again, a2 := n.authorizeWith("auth-msg-1", k.CardNo, "10.00", "USD")
	if !first.Approved || *again.AuthID != *first.AuthID || string(a1.Data) != string(a2.Data) {
		t.Errorf("repeat: %s then %s", a1.raw, a2.raw)
	}
	n.wantBalances(sh, k.CardNo, "90.00", "10.00")
	// The same id for another message is a conflict that moves nothing.
	n.call("POST", "/network/authorize", fmt.Sprintf(`{"messageId":"auth-msg-1","cardNo":%q,"amount":"11.00","currency":"USD"}`, k.CardNo)).
		must(t, 200, codeIdemConflict)
	// A repeated declined message stays declined even once it could pass.
	d1, _ := n.authorizeWith("auth-msg-2", k.CardNo, "95.00", "USD")
	n.request(&sh, "POST", "/shop/card/transfer", fmt.Sprintf(`{"cardNo":%q,"amount":"10","currency":"USD","direction":"IN"}`, k.CardNo)).must(t, 200, 200)
	d2, _ := n.authorizeWith("auth-msg-2", k.CardNo, "95.00", "USD")
	if d1.Code != "51" || d2.Code != "51" {
		t.Errorf("repeated decline: %s then %s", d1.Code, d2.Code)
	}
	n.wantBalances(sh, k.CardNo, "100.00", "10.00")

	// A repeated clearing, then a second one, then a reversal after it.
	id := *first.AuthID
	c1 := n.hold("/network/clear", "clear-1", id, "10.00", codeOK)
	c2 := n.hold("/network/clear", "clear-1", id, "10.00", codeOK)
	if c1 != c2 || c1.Status != "CLEARED" {
		t.Errorf("repeated clearing %+v then %+v", c1, c2)
	}
	n.hold("/network/clear", "clear-2", id, "10.00", codeAuthClosed)
	n.hold("/network/reverse", "rev-0", id, "", codeAuthClosed)
	if got := n.countEntries("CARD_SETTLE"); got != 1 {
		t.Errorf("%d CARD_SETTLE entries, want 1", got)
	}
	n.wantBalances(sh, k.CardNo, "100.00", "0.00")

	// A partial reversal, its repeat, a full reversal, a second full
	// reversal, and a capture after it.
	id = n.approved(k.CardNo, "40.00", "USD")
	r1 := n.hold("/network/reverse", "rev-1", id, "15.00", codeOK)
	r2 := n.hold("/network/reverse", "rev-1", id, "15.00", codeOK)
	if r1 != r2 || r1.Status != "OPEN" || r1.Released.String() != "15.00" || r1.Held.String() != "25.00" {
		t.Errorf("partial reversal %+v then %+v", r1, r2)
	}
	n.call("POST", "/network/reverse", `{"messageId":"rev-2","authId":"`+id+`","amount":"25.01"}`).must(t, 400, 400)
	if r := n.hold("/network/reverse", "rev-3", id, "", codeOK); r.Status != "REVERSED" || r.Released.String() != "25.00" {
		t.Errorf("full reversal %+v", r)
	}
	n.hold("/network/reverse", "rev-4", id, "", codeAuthClosed)
	n.hold("/network/clear", "clear-3", id, "40.00", codeAuthClosed)
	if got := n.countEntries("REVERSAL"); got != 2 {
		t.Errorf("%d REVERSAL entries, want 2", got)
	}
	n.wantBalances(sh, k.CardNo, "100.00", "0.00")

	// A repeated refund.
	for i := 0; i < 2; i++ {
		n.call("POST", "/network/refund", fmt.Sprintf(`{"messageId":"refund-1","cardNo":%q,"amount":"1.00","currency":"USD"}`, k.CardNo)).must(t, 200, 200)
	}
	n.wantBalances(sh, k.CardNo, "101.00", "0.00")
}

// 200 concurrent authorizations of 1.00 on a card holding 100.00: exactly
// 100 are approved.
func TestNetworkConcurrentAuthorizations(t *testing.T) {
	// Not parallel: it drives 200 concurrent authorizations against one card; it runs alone, before the parallel tests,
	// so that it tests the server and not the machine.
	n := newNetServer(t)
	sh := n.fundedShop()
	k := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"100.00"}`)
	const total = 200
	var wg sync.WaitGroup
	var approved, declined atomic.Int64
	start := make(chan struct{})
	for i := 0; i < total; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			// A 503 is the contract's answer to overload (the ledger
			// answers it when a connection takes over 5 s to dial, as on a
			// loaded CI machine): the network sends the same message again,
			// which its messageId makes safe. A 503 that never ends still
			// fails, at the deadline.
			body := fmt.Sprintf(`{"messageId":"race-%d","cardNo":%q,"amount":1,"currency":"USD"}`, i, k.CardNo)
			a := n.call("POST", "/network/authorize", body)
			for deadline := time.Now().Add(2 * time.Minute); a.status == 503 && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				a = n.call("POST", "/network/authorize", body)
			}
			var d authorizeOut
			if a.status != 200 || a.Code != 200 || json.Unmarshal(a.Data, &d) != nil {
				t.Errorf("authorization %d: %s", i, a.raw)
				return
			}
			switch {
			case d.Approved && d.Code == "00":
				approved.Add(1)
			case !d.Approved && d.Code == "51":
				declined.Add(1)
			default:
				t.Errorf("authorization %d: %s", i, a.raw)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	if approved.Load() != 100 || declined.Load() != 100 {
		t.Fatalf("%d approved and %d declined, want 100 and 100", approved.Load(), declined.Load())
	}
	n.wantBalances(sh, k.CardNo, "0.00", "100.00")
	var list struct {
		List []json.RawMessage `json:"list"`
	}
	n.call("GET", "/network/authorizations?cardNo="+k.CardNo+"&limit=500", "").must(t, 200, 200).into(t, &list)
	if len(list.List) != total {
		t.Errorf("%d attempts listed, want %d", len(list.List), total)
	}
}

func TestNetworkToken(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	body := `{"messageId":"m1","cardNo":"crd_x","amount":1,"currency":"USD"}`
	var first []byte
	for _, h := range [][]string{
		nil,
		{"Authorization", "Bearer wrong-token"},
		{"Authorization", "Bearer " + testInternalToken + "x"},
		{"Authorization", "Bearer " + testInternalToken[:len(testInternalToken)-1]},
		{"Authorization", "Basic " + testInternalToken},
		{"Authorization", testInternalToken},
		{"Authorization", "Bearer"},
	} {
		a := n.icall("POST", "/network/authorize", body, h...).must(t, 401, 401)
		if a.Message != messageBadToken || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") || a.header.Get("X-Request-Id") == "" {
			t.Errorf("%v: %s %v", h, a.raw, a.header)
		}
		if first == nil {
			first = a.raw
		} else if string(first) != string(a.raw) {
			t.Errorf("401 bodies differ: %s and %s", first, a.raw)
		}
	}
	// Two Authorization headers are refused too.
	n.icall("GET", "/network/authorizations?cardNo=crd_x", "",
		"Authorization", "Bearer "+testInternalToken, "Authorization", "Bearer "+testInternalToken).must(t, 401, 401)
	for _, p := range []string{"/network/authorizations?cardNo=crd_x", "/network/authorizations/auth_x"} {
		n.icall("GET", p, "").must(t, 401, 401)
	}
	n.icall("POST", "/rail/report", `{}`).must(t, 401, 401)
	// The scheme is case-insensitive; the token is not.
	n.icall("POST", "/network/authorize", body, "Authorization", "bearer "+testInternalToken).must(t, 200, 200)
	n.icall("POST", "/network/authorize", `{"messageId":"m2","cardNo":"crd_x","amount":1,"currency":"USD"}`,
		"Authorization", "Bearer "+strings.ToUpper(testInternalToken)).must(t, 401, 401)
	// The envelope everywhere: health without a token, unknown routes and methods.
	if a := n.icall("GET", "/healthz", ""); a.status != 200 {
		t.Errorf("/healthz: %s", a.raw)
	}
	n.call("GET", "/shop/account", "").must(t, 404, 404)
	n.call("GET", "/network/authorize", "").must(t, 405, 405)
	// The /shop server does not serve the network API.
	sh := n.fundedShop()
	n.request(&sh, "POST", "/network/authorize", body, "Authorization", "Bearer "+testInternalToken).must(t, 404, 404)
	// An empty configured token refuses everything.
	empty := httptest.NewServer(NewInternalServer(PartnerDeps{Network: n.l.Network, Rails: n.l.Remit}))
	defer empty.Close()
	copyS := *n.internal
	copyS.srv, copyS.client = empty, empty.Client()
	copyS.request(nil, "POST", "/network/authorize", body, "Authorization", "Bearer ").must(t, 401, 401)
	// No log line holds the token.
	if strings.Contains(n.logs.String(), testInternalToken) {
		t.Errorf("the token is in the logs")
	}
}

// A rail partner's report settles an in-flight remittance once.
func TestRailReport(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.newShop(merchant.Spec{Currencies: []string{"EUR"}})
	n.deposit(sh, "EUR", 5_000_00)
	ctx := context.Background()
	b, _ := json.Marshal(map[string]string{"name": "Hans Muster GmbH", "country": "DE",
		"bank_swift": "COBADEFFXXX", "account_no": "DE89370400440532013000"})
	in := remittance.RemittanceInput{PayerID: "payer-1", Beneficiary: b, Amount: 1_000_00, Fee: 5_00,
		Currency: "EUR", Purpose: "SUPP", Rail: "SEPA"}
	settle, err := n.l.Remit.CreateRemittance(ctx, sh.m.ID, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	ret, err := n.l.Remit.CreateRemittance(ctx, sh.m.ID, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The worker with a manual rail moves them to IN_FLIGHT and leaves them.
	w := remittance.NewLifecycle(n.l.Remit, remittance.LifecycleConfig{Rail: &railsim.SimulatedRail{Manual: true, Now: n.l.Now}})
	for i := 0; i < 5; i++ {
		if _, err := w.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{settle.TxID, ret.TxID} {
		if r, err := n.l.Remit.Remittance(ctx, sh.m.ID, id); err != nil || r.Status != remittance.RemitInFlight {
			t.Fatalf("%s: %+v %v", id, r, err)
		}
	}
	type reportOut struct {
		TxID      string      `json:"txId"`
		Status    string      `json:"status"`
		Reason    *string     `json:"reason"`
		Amount    json.Number `json:"amount"`
		Fee       json.Number `json:"fee"`
		Currency  string      `json:"currency"`
		Rail      string      `json:"rail"`
		SettledAt *string     `json:"settledAt"`
	}
	report := fmt.Sprintf(`{"messageId":"rail-1","txId":%q,"status":"SETTLED"}`, settle.TxID)
	var r1, r2 reportOut
	n.call("POST", "/rail/report", report).must(t, 200, 200).into(t, &r1)
	n.call("POST", "/rail/report", report).must(t, 200, 200).into(t, &r2)
	if r1.SettledAt == nil || r2.SettledAt == nil || *r1.SettledAt != *r2.SettledAt {
		t.Fatalf("settledAt %v then %v", r1.SettledAt, r2.SettledAt)
	}
	r2.SettledAt = r1.SettledAt
	if r1 != r2 || r1.Status != "SETTLED" || !timestampRE.MatchString(*r1.SettledAt) ||
		r1.Amount.String() != "1000.00" || r1.Fee.String() != "5.00" || r1.Rail != "SEPA" || r1.Reason != nil {
		t.Errorf("report %+v then %+v", r1, r2)
	}
	// Another message contradicting it is refused and moves nothing.
	a := n.call("POST", "/rail/report", fmt.Sprintf(`{"messageId":"rail-2","txId":%q,"status":"RETURNED","reason":"AC04"}`, settle.TxID))
	if a.status != 200 || a.Code == 200 {
		t.Errorf("a return after the settlement: %s", a.raw)
	}
	if got := n.countEntries("REMIT_SETTLE"); got != 1 {
		t.Errorf("%d REMIT_SETTLE entries, want 1", got)
	}
	// A return gives the amount back to the funding account.
	var r3 reportOut
	n.call("POST", "/rail/report", fmt.Sprintf(`{"messageId":"rail-3","txId":%q,"status":"RETURNED","reason":"AC01"}`, ret.TxID)).
		must(t, 200, 200).into(t, &r3)
	if r3.Status != "RETURNED" || r3.Reason == nil || *r3.Reason != "AC01" || r3.SettledAt != nil {
		t.Errorf("return %+v", r3)
	}
	if got := n.fundingBalance(sh, "EUR"); got != "3990.00" { // 5000 − 2 × 1005 + 1000 returned
		t.Errorf("funding %s", got)
	}
	// Refusals name their field; an unknown remittance is a business failure.
	for _, tt := range []struct{ body, field string }{
		{`{"messageId":"x1","txId":"` + ret.TxID + `","status":"LOST"}`, "status"},
		{`{"messageId":"x1","txId":"` + ret.TxID + `","status":"RETURNED"}`, "reason"},
		{`{"messageId":"x1","txId":"` + ret.TxID + `","status":"RETURNED","reason":"bad reason"}`, "reason"},
		{`{"messageId":"x1","txId":"` + ret.TxID + `","status":"SETTLED","reason":"AC01"}`, "reason"},
		{`{"messageId":"x1","status":"SETTLED"}`, "txId"},
	} {
		if a := n.call("POST", "/rail/report", tt.body).must(t, 400, 400); !strings.HasPrefix(a.Message, tt.field+": ") {
			t.Errorf("%s: %q does not name %s", tt.body, a.Message, tt.field)
		}
	}
	a = n.call("POST", "/rail/report", `{"messageId":"x2","txId":"rmt_nosuchremittance0000","status":"SETTLED"}`)
	if a.status != 200 || a.Code == 200 {
		t.Errorf("unknown remittance: %s", a.raw)
	}
}
