package api

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/paygate/gateway/api/client"
)

// The typed client against the real server: the card list with its
// filters, the filtered bill as a page and as CSV, and the API version,
// named per call or for the client, refused when unknown (a typed 400
// naming X-Api-Version).
func TestClientCardListAndFilteredBill(t *testing.T) {
	now, today := todayClock()
	s := newTestServer(t, serverOptions{ledgerNow: now})
	sh := s.fundedShop()
	ctx := context.Background()
	c, err := client.New(client.Config{BaseURL: s.srv.URL, ShopNo: sh.creds.ShopNo, PublicKey: sh.creds.PublicKey, HTTPClient: s.client})
	if err != nil {
		t.Fatal(err)
	}
	usd, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD", Amount: client.MustDecimal("5.00")})
	if err != nil {
		t.Fatal(err)
	}
	eur, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453202", Currency: "EUR", Amount: client.MustDecimal("2.00")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FreezeCard(ctx, client.FreezeCardRequest{CardNo: eur.CardNo}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListCards(ctx, client.CardListQuery{})
	if err != nil || list.Total != 2 || list.List[0].CardNo != usd.CardNo || list.List[1].CardNo != eur.CardNo ||
		list.List[0].Balance.String() != "5.00" {
		t.Fatalf("ListCards: %+v %v", list, err)
	}
	frozen, err := c.ListCards(ctx, client.CardListQuery{Status: "FROZEN", Currency: "EUR", CreatedFrom: today, CreatedTo: today, Size: 1})
	if err != nil || frozen.Total != 1 || len(frozen.List) != 1 || frozen.List[0].CardNo != eur.CardNo {
		t.Fatalf("ListCards frozen: %+v %v", frozen, err)
	}

	page, err := c.Bill(ctx, client.BillQuery{StartDate: today, EndDate: today, Types: []string{"CARD_FUND"}, Currency: "USD"})
	if err != nil || page.Total != 2 || page.List[0].Type != "CARD_FUND" || page.List[1].Account != usd.CardNo {
		t.Fatalf("Bill filtered: %+v %v", page, err)
	}
	byCard, err := c.Bill(ctx, client.BillQuery{StartDate: today, EndDate: today, CardNo: eur.CardNo, Size: 1, Page: 2})
	if err != nil || byCard.Total != 2 || len(byCard.List) != 1 || byCard.List[0].Account != eur.CardNo {
		t.Fatalf("Bill by card: %+v %v", byCard, err)
	}
	var csv bytes.Buffer
	info, err := c.BillCSV(ctx, client.BillQuery{StartDate: today, EndDate: today, Types: []string{"DEPOSIT", "CARD_FUND"}}, &csv)
	if err != nil || info.Total != 6 || strings.Count(csv.String(), "\n") != 7 {
		t.Errorf("BillCSV filtered: %+v %v\n%s", info, err, csv.String())
	}

	// Versions: the current one named per call or for the client; an
	// unknown one is a typed 400 naming the header.
	if _, err := c.ListCards(ctx, client.CardListQuery{}, client.WithAPIVersion("2026-11-23")); err != nil {
		t.Errorf("ListCards at 2026-11-23: %v", err)
	}
	_, err = c.ListCards(ctx, client.CardListQuery{}, client.WithAPIVersion("2001-01-01"))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 400 || ce.Field != "X-Api-Version" {
		t.Errorf("an unknown version: %#v", err)
	}
	pinnedOld, err := client.New(client.Config{BaseURL: s.srv.URL, ShopNo: sh.creds.ShopNo, PublicKey: sh.creds.PublicKey,
		HTTPClient: s.client, APIVersion: "2001-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pinnedOld.Account(ctx); !errors.As(err, &ce) || ce.Field != "X-Api-Version" {
		t.Errorf("a client at an unknown version: %v", err)
	}
	if _, err := pinnedOld.Account(ctx, client.WithAPIVersion("2026-11-23")); err != nil {
		t.Errorf("the call's version over the client's: %v", err)
	}
}
