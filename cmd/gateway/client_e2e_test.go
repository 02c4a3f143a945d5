package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/netclient"
)

// TestGoClients drives the real gateway (`gateway serve`, both listeners)
// with the typed clients: every /shop operation through api/client, the
// card network and the rail through internal/netclient, a signed callback
// through the client's receiver, and the internal listener's requests in
// the /shop listener's metrics.
func TestGoClients(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.env["GATEWAY_RAIL_MODE"] = "manual"
	g.env["GATEWAY_REMIT_SCREENING_DELAY"] = "100ms"
	g.env["GATEWAY_CALLBACK_ALLOW_PRIVATE"] = "true" // the receiver below is on the loopback
	s := g.serve()
	internalAddr := s.internalAddr()
	// The bill below asks from this day to its own: the gateway's clock
	// is the wall clock, and the test may run over UTC midnight.
	firstDay := time.Now().UTC().Format(time.DateOnly)
	m := g.createMerchant("Client shop", "USD,EUR")
	g.deposit(m.ShopNo, "USD", "1000.00")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()

	c, err := client.New(client.Config{BaseURL: s.url(""), ShopNo: m.ShopNo, PublicKey: m.PublicKey, HTTPClient: s.client})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := c.Account(ctx)
	if err != nil || acct.ShopNo != m.ShopNo || len(acct.Balances) != 2 || acct.LastAuthenticatedAt == nil {
		t.Fatalf("Account: %+v %v", acct, err)
	}
	for _, b := range acct.Balances {
		if b.Currency == "USD" && b.Balance.String() != "1000.00" {
			t.Errorf("USD balance %s, want exactly 1000.00", b.Balance)
		}
	}
	bins, err := c.BINs(ctx)
	if err != nil || len(bins) == 0 {
		t.Fatalf("BINs: %v %v", bins, err)
	}

	// A signed callback, verified by the client's receiver.
	events := make(chan client.CallbackEvent, 16)
	rcv := httptest.NewServer(client.CallbackHandler(m.PrivateKey, client.CallbackOptions{}, func(_ context.Context, e client.CallbackEvent) error {
		events <- e
		return nil
	}))
	defer rcv.Close()

	card, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD", Amount: client.MustDecimal("50.00"),
		Remark: "go client", CallbackURL: rcv.URL + "/hooks"}, client.WithIdempotencyKey("e2e-create-1"))
	if err != nil || card.Balance.String() != "50.00" || card.Status != "ACTIVE" {
		t.Fatalf("CreateCard: %+v %v", card, err)
	}
	// The same key again: the first answer, no second card.
	again, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD", Amount: client.MustDecimal("50.00"),
		Remark: "go client", CallbackURL: rcv.URL + "/hooks"}, client.WithIdempotencyKey("e2e-create-1"))
	if err != nil || again.CardNo != card.CardNo {
		t.Errorf("CreateCard replayed: %+v %v, want card %s", again, err, card.CardNo)
	}
	select {
	case e := <-events:
		data, err := client.DecodeEventData(e)
		cd, ok := data.(*client.CardEventData)
		if err != nil || !ok || e.EventType != client.EventCardCreated || cd.CardNo != card.CardNo || cd.Balance.String() != "50.00" {
			t.Errorf("callback %+v: %+v %v", e, data, err)
		}
	case <-ctx.Done():
		t.Fatal("no card.created callback")
	}

	if got, err := c.Card(ctx, card.CardNo); err != nil || got.PanRef != card.PanRef {
		t.Errorf("Card: %+v %v", got, err)
	}
	tr, err := c.Transfer(ctx, client.TransferRequest{CardNo: card.CardNo, Amount: client.MustDecimal("12.34"), Currency: "USD",
		Direction: client.DirectionIn})
	if err != nil || tr.CardBalance.String() != "62.34" || tr.FundingBalance.String() != "937.66" || tr.FXRate != nil {
		t.Fatalf("Transfer: %+v %v", tr, err)
	}
	if b, err := c.CardBalance(ctx, card.CardNo); err != nil || b.Balance.String() != "62.34" {
		t.Errorf("CardBalance: %+v %v", b, err)
	}
	items, err := c.CardBalances(ctx, []string{card.CardNo, "crd_unknown"})
	if err != nil || len(items) != 2 || !items[0].Found || items[0].Balance.String() != "62.34" || items[1].Found || items[1].Balance != nil {
		t.Errorf("CardBalances: %+v %v", items, err)
	}
	if err := c.FreezeCard(ctx, client.FreezeCardRequest{CardNo: card.CardNo, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	// Typed failures: a business code, and a 400 naming its field.
	_, err = c.Transfer(ctx, client.TransferRequest{CardNo: card.CardNo, Amount: client.MustDecimal("1"), Currency: "USD", Direction: client.DirectionIn})
	var e *client.Error
	if !errors.As(err, &e) || !e.Business() || !errors.Is(err, client.CodeCardFrozen) || e.IdempotencyKey == "" || e.Attempts != 1 {
		t.Errorf("transfer IN on a frozen card: %#v", err)
	}
	_, err = c.Transfer(ctx, client.TransferRequest{CardNo: card.CardNo, Amount: client.MustDecimal("1.005"), Currency: "USD", Direction: client.DirectionOut})
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Field != "amount" || e.RequestID == "" {
		t.Errorf("three decimals: %#v", err)
	}
	if _, err := c.Card(ctx, "crd_nosuchcard"); !errors.Is(err, client.CodeCardNotFound) {
		t.Errorf("unknown card: %v", err)
	}
	if err := c.UnfreezeCard(ctx, card.CardNo); err != nil {
		t.Fatal(err)
	}

	// The card network spends it, through the internal API.
	token, err := os.ReadFile(filepath.Join(g.env["GATEWAY_DATA_DIR"], "internal-token"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := netclient.New(netclient.Config{BaseURL: s.scheme + "://" + internalAddr, Token: strings.TrimSpace(string(token)), HTTPClient: s.client})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Healthz(ctx); err != nil {
		t.Errorf("Healthz: %v", err)
	}
	d, err := nc.Authorize(ctx, netclient.AuthorizeRequest{MessageID: "e2e-auth-1", CardNo: card.CardNo, Amount: client.MustDecimal("10.00"),
		Currency: "USD", MerchantName: "E2E", MCC: "5814", MerchantCountry: "US"})
	if err != nil || !d.Approved || d.Code != "00" || d.AuthID == nil || d.Available == nil || d.Available.String() != "52.34" {
		t.Fatalf("Authorize: %+v %v", d, err)
	}
	decline, err := nc.Authorize(ctx, netclient.AuthorizeRequest{MessageID: "e2e-auth-2", CardNo: card.CardNo, Amount: client.MustDecimal("500"), Currency: "USD"})
	if err != nil || decline.Approved || decline.Code != "51" || decline.AuthID != nil {
		t.Errorf("decline: %+v %v", decline, err)
	}
	h, err := nc.Clear(ctx, netclient.ClearRequest{MessageID: "e2e-clear-1", AuthID: *d.AuthID, Amount: client.MustDecimal("7.50")})
	if err != nil || h.Status != "CLEARED" || h.Captured.String() != "7.50" || h.Released.String() != "2.50" {
		t.Errorf("Clear: %+v %v", h, err)
	}
	if _, err := nc.Reverse(ctx, netclient.ReverseRequest{MessageID: "e2e-rev-1", AuthID: *d.AuthID}); !errors.Is(err, client.CodeAuthorizationClosed) {
		t.Errorf("reverse after clear: %v, want 1202", err)
	}
	ref, err := nc.Refund(ctx, netclient.RefundRequest{MessageID: "e2e-ref-1", CardNo: card.CardNo, Amount: client.MustDecimal("2.50"), Currency: "USD"})
	if err != nil || ref.Credited != "card" || ref.Available.String() != "57.34" {
		t.Errorf("Refund: %+v %v", ref, err)
	}
	if list, err := nc.Attempts(ctx, card.CardNo, 10); err != nil || len(list) != 2 || list[0].Code != "51" {
		t.Errorf("Attempts: %+v %v", list, err)
	}
	if a, err := nc.Authorization(ctx, *d.AuthID); err != nil || a.Status != "CLEARED" || a.Captured.String() != "7.50" {
		t.Errorf("Authorization: %+v %v", a, err)
	}

	// A remittance, settled by the rail partner.
	corr, err := c.RemittanceFields(ctx, "DE", "USD")
	if err != nil || corr.Rail == "" {
		t.Fatalf("RemittanceFields: %+v %v", corr, err)
	}
	rm, err := c.CreateRemittance(ctx, client.CreateRemittanceRequest{PayerID: "payer-1", Amount: client.MustDecimal("100.00"), Currency: "USD",
		Purpose: "SUPP", Beneficiary: client.Beneficiary{Name: "Hans Muster GmbH", Country: "DE", BankSwift: "COBADEFFXXX",
			AccountNo: "DE89370400440532013000"}})
	if err != nil || rm.Status != "SUBMITTED" {
		t.Fatalf("CreateRemittance: %+v %v", rm, err)
	}
	for {
		q, err := c.Remittance(ctx, rm.TxID)
		if err != nil {
			t.Fatal(err)
		}
		if q.Status == "IN_FLIGHT" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("remittance still %s", q.Status)
		case <-time.After(50 * time.Millisecond):
		}
	}
	rep, err := nc.RailReport(ctx, netclient.RailReportRequest{MessageID: "e2e-rail-1", TxID: rm.TxID, Status: "SETTLED"})
	if err != nil || rep.Status != "SETTLED" || rep.SettledAt == nil || rep.Reason != nil {
		t.Fatalf("RailReport: %+v %v", rep, err)
	}
	q, err := c.Remittance(ctx, rm.TxID)
	if err != nil || q.Status != "SETTLED" || q.SettledAt == nil || !strings.HasPrefix(q.Beneficiary.AccountNo, "****") || len(q.History) != 4 {
		t.Errorf("Remittance: %+v %v", q, err)
	}

	if err := c.CancelCard(ctx, card.CardNo); err != nil {
		t.Fatal(err)
	}
	// The bill, as a page and as CSV.
	today := time.Now().UTC().Format(time.DateOnly)
	page, err := c.Bill(ctx, client.BillQuery{StartDate: firstDay, EndDate: today, Size: 500})
	if err != nil || page.Total == 0 || int64(len(page.List)) != page.Total || page.List[0].Type != "DEPOSIT" {
		t.Fatalf("Bill: %+v %v", page, err)
	}
	var csv bytes.Buffer
	info, err := c.BillCSV(ctx, client.BillQuery{StartDate: firstDay, EndDate: today}, &csv)
	if err != nil || info.Total != page.Total || !strings.HasPrefix(csv.String(), "billId,type,amount,") ||
		strings.Count(csv.String(), "\n") != int(page.Total)+1 || !strings.HasSuffix(info.Filename, ".csv") {
		t.Errorf("BillCSV: %+v %v\n%s", info, err, csv.String())
	}

	// Both listeners' requests are in the internal listener's metrics.
	resp, err := s.client.Get(s.internalURL("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	_, _ = metrics.ReadFrom(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`gateway_internal_http_requests_total{code="200",method="POST",route="/network/authorize",status="200"} 2`,
		`gateway_internal_http_requests_total{code="200",method="POST",route="/rail/report",status="200"} 1`,
		`go_sql_open_connections{db_name="gateway"}`,
	} {
		if !strings.Contains(metrics.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	s.mustStop()
	g.auditOK()
}
