package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/database"
)

// TestSandboxEndToEnd drives the real gateway (`gateway serve`) as a test
// merchant made by `merchant create --test`: authorize → capture, reverse,
// refund on its card and settle and return of its remittances through
// /shop/sandbox, each through to the signed callback on a loopback
// receiver and the bill line; a live merchant's sandbox paths answer as
// unknown paths, byte for byte; another merchant's objects look unknown;
// and audit verify covers test and live merchants alike.
func TestSandboxEndToEnd(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.env["GATEWAY_REMIT_SCREENING_DELAY"] = "100ms"
	g.env["GATEWAY_REMIT_IN_FLIGHT"] = "100ms" // the simulated rail: a live remittance settles at once
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "true"
	s := g.serve()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	// The bill below asks from this day to its own: the gateway's clock
	// is the wall clock, and the test may run over UTC midnight.
	firstDay := time.Now().UTC().Format(time.DateOnly)

	type testMerchant struct {
		credentials
		Test bool `json:"test"`
	}
	createTest := func(name string) testMerchant {
		out := g.mustRun("merchant", "create", "--name", name, "--currencies", "USD", "--test")
		var m testMerchant
		if err := json.Unmarshal([]byte(out), &m); err != nil || !m.Test {
			t.Fatalf("merchant create --test printed %s (%v)", out, err)
		}
		return m
	}
	tm, other := createTest("Sandbox shop"), createTest("Other test shop")
	live := g.createMerchant("Live shop", "USD")
	for _, m := range []string{tm.ShopNo, live.ShopNo} {
		g.deposit(m, "USD", "1000.00")
	}

	next, rcvURL := receiveCallbacks(ctx, t, g, tm.ShopNo, tm.PrivateKey)
	c, lc, oc := s.shopClient(t, tm.ShopNo, tm.PublicKey), s.shopClient(t, live.ShopNo, live.PublicKey), s.shopClient(t, other.ShopNo, other.PublicKey)
	card, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD", Amount: client.MustDecimal("100.00")})
	if err != nil {
		t.Fatal(err)
	}

	// authorize → capture, to the callbacks and the bill lines.
	d, err := c.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{CardNo: card.CardNo, Amount: client.MustDecimal("10.00"), Currency: "USD",
		MerchantName: "Blue Bottle", MCC: "5814", MerchantCountry: "US"}, client.WithIdempotencyKey("e2e-auth-1"))
	if err != nil || !d.Approved || d.Code != "00" || d.AuthID == nil || d.Available.String() != "90.00" {
		t.Fatalf("SandboxAuthorize: %+v %v", d, err)
	}
	authID := *d.AuthID
	if a := next(client.EventAuthorizationApproved).(*client.AuthorizationEventData); a.AuthID != authID || a.Amount.String() != "10.00" {
		t.Errorf("authorization.approved: %+v", a)
	}
	h, err := c.SandboxCapture(ctx, client.SandboxCaptureRequest{AuthID: authID, Amount: client.MustDecimal("7.50")})
	if err != nil || h.Status != "CLEARED" || h.Captured.String() != "7.50" || h.Released.String() != "2.50" || h.Held.String() != "0.00" {
		t.Fatalf("SandboxCapture: %+v %v", h, err)
	}
	if e := next(client.EventAuthorizationCleared).(*client.HoldEventData); e.AuthID != authID || e.Captured.String() != "7.50" {
		t.Errorf("authorization.cleared: %+v", e)
	}

	// reverse, refund.
	d2, err := c.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{CardNo: card.CardNo, Amount: client.MustDecimal("5.00"), Currency: "USD"})
	if err != nil || !d2.Approved {
		t.Fatalf("SandboxAuthorize: %+v %v", d2, err)
	}
	r, err := c.SandboxReverse(ctx, client.SandboxReverseRequest{AuthID: *d2.AuthID})
	if err != nil || r.Status != "REVERSED" || r.Released.String() != "5.00" {
		t.Fatalf("SandboxReverse: %+v %v", r, err)
	}
	if e := next(client.EventAuthorizationReversed).(*client.HoldEventData); e.AuthID != *d2.AuthID || e.Released.String() != "5.00" {
		t.Errorf("authorization.reversed: %+v", e)
	}
	f, err := c.SandboxRefund(ctx, client.SandboxRefundRequest{CardNo: card.CardNo, Amount: client.MustDecimal("2.00"), Currency: "USD"})
	if err != nil || f.Credited != "card" || f.Available.String() != "94.50" {
		t.Fatalf("SandboxRefund: %+v %v", f, err)
	}
	if e := next(client.EventCardRefunded).(*client.RefundEventData); e.CardNo != card.CardNo || e.Amount.String() != "2.00" {
		t.Errorf("card.refunded: %+v", e)
	}
	page, err := c.Bill(ctx, client.BillQuery{StartDate: firstDay, EndDate: time.Now().UTC().Format(time.DateOnly), Size: 500})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range page.List {
		if l.CardNo == card.CardNo && l.Account == card.CardNo {
			lines = append(lines, fmt.Sprintf("%s %s %s", l.Type, l.Amount, l.BalanceAfter))
		}
	}
	want := []string{"CARD_FUND 100.00 100.00", "CARD_AUTH -10.00 90.00", "CARD_AUTH_RELEASE 2.50 92.50",
		"CARD_AUTH -5.00 87.50", "REVERSAL 5.00 92.50", "CARD_REFUND 2.00 94.50"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the card's bill lines:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// Remittances: the test merchant's wait in flight for its sandbox while
	// a live one is settled by the simulated rail.
	ben := client.Beneficiary{Name: "Acme Supplies Inc", Country: "US", AccountNo: "123456789",
		Extra: map[string]string{"routing_number": "021000021", "account_type": "CHECKING"}}
	create := func(cl *client.Client, amount string) string {
		rm, err := cl.CreateRemittance(ctx, client.CreateRemittanceRequest{PayerID: "payer-1", Amount: client.MustDecimal(amount),
			Currency: "USD", Beneficiary: ben, CallbackURL: rcvURL + "/remit"})
		if err != nil {
			t.Fatalf("CreateRemittance: %v", err)
		}
		return rm.TxID
	}
	settleTx, returnTx, liveTx := create(c, "100.00"), create(c, "50.00"), create(lc, "100.00")
	waitFor := func(cl *client.Client, tx, status string) {
		t.Helper()
		for {
			q, err := cl.Remittance(ctx, tx)
			if err != nil {
				t.Fatal(err)
			}
			if q.Status == status {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("remittance %s still %s, want %s", tx, q.Status, status)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	waitFor(lc, liveTx, "SETTLED")
	waitFor(c, settleTx, "IN_FLIGHT")
	waitFor(c, returnTx, "IN_FLIGHT")
	rep, err := c.SandboxSettleRemittance(ctx, client.SandboxSettleRequest{TxID: settleTx})
	if err != nil || rep.Status != "SETTLED" || rep.SettledAt == nil || rep.Reason != nil {
		t.Fatalf("SandboxSettleRemittance: %+v %v", rep, err)
	}
	rep, err = c.SandboxReturnRemittance(ctx, client.SandboxReturnRequest{TxID: returnTx, Reason: "AC04"})
	if err != nil || rep.Status != "RETURNED" || rep.Reason == nil || *rep.Reason != "AC04" {
		t.Fatalf("SandboxReturnRemittance: %+v %v", rep, err)
	}
	got := map[string]string{}
	for len(got) < 2 {
		e := next(client.EventRemittanceStatus).(*client.RemittanceEventData)
		if e.Status == "SETTLED" || e.Status == "RETURNED" {
			got[e.TxID] = e.Status + " " + e.Reason
		}
	}
	if got[settleTx] != "SETTLED " || got[returnTx] != "RETURNED AC04" {
		t.Errorf("remittance.status callbacks: %v", got)
	}

	// A live merchant: the sandbox is an unknown path, byte for byte.
	_, err = lc.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{CardNo: card.CardNo, Amount: client.MustDecimal("1"), Currency: "USD"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusNotFound {
		t.Errorf("a live merchant's sandbox authorization: %v, want HTTP 404", err)
	}
	raw := func(path string) (int, string) {
		req, _ := http.NewRequest("POST", s.url(path), strings.NewReader(`{"txId":"x"}`))
		req.Header.Set("X-Shop-No", live.ShopNo)
		req.Header.Set("X-Public-Key", live.PublicKey)
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"/shop/sandbox/authorize", "/shop/sandbox/remittance/settle", "/shop/sandbox/nope"} {
		gs, gb := raw(p)
		us, ub := raw("/shop/no-such-endpoint")
		if gs != us || gb != ub || gs != 404 {
			t.Errorf("live merchant, POST %s: %d %s; an unknown path: %d %s", p, gs, gb, us, ub)
		}
	}

	// Another test merchant: the first one's card, authorization and
	// remittance are unknown to it.
	if _, err := oc.SandboxAuthorize(ctx, client.SandboxAuthorizeRequest{CardNo: card.CardNo, Amount: client.MustDecimal("1"), Currency: "USD"}); !errors.Is(err, client.CodeCardNotFound) {
		t.Errorf("another merchant's card: %v", err)
	}
	if _, err := oc.SandboxReverse(ctx, client.SandboxReverseRequest{AuthID: authID}); !errors.Is(err, client.CodeAuthorizationNotFound) {
		t.Errorf("another merchant's authorization: %v", err)
	}
	if _, err := oc.SandboxSettleRemittance(ctx, client.SandboxSettleRequest{TxID: settleTx}); !errors.Is(err, client.CodeRemittanceNotFound) {
		t.Errorf("another merchant's remittance: %v", err)
	}

	// audit verify covers both, and finds a break in a test merchant's
	// books as in a live one's.
	g.auditOK()
	g.auditOK("--shop-no", tm.ShopNo)
	db, err := database.OpenDB(ctx, g.env["DATABASE_URL"], database.DBOptions{ConnsMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `update balances set balance = balance + 1 where account_id =
		(select a.id from accounts a join merchants m on m.id = a.merchant_id where m.shop_no = ? and a.type = 'network_settlement')`, tm.ShopNo); err != nil {
		t.Fatal(err)
	}
	r2 := g.run("audit", "verify")
	if r2.code() != 1 || !strings.Contains(r2.stdout, "BREAK") || !strings.Contains(r2.stdout, "network_settlement") {
		t.Errorf("audit verify after tampering with a test merchant's settlement account: exit %d\n%s", r2.code(), r2.stdout)
	}
}
