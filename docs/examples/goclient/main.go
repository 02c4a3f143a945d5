// Command goclient is the example of the Go client (api/client) that
// docs/api.md shows: a merchant's server reading its account, issuing a
// card, topping it up and reading the bill, with exact decimals, its own
// Idempotency-Keys and typed errors.
//
// With `make run` in another terminal (it writes the demo merchant's
// credentials into var/demo-merchant.json):
//
//	go run ./docs/examples/goclient -credentials var/demo-merchant.json
//
// cmd/gateway's tests do not run it; its own test (main_test.go) runs it
// against a real gateway on every `make test`.
package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/paygate/gateway/api/client"
)

// credentials are the merchant's, as `serve --demo` writes them.
type credentials struct {
	ShopNo    string `json:"shopNo"`
	PublicKey string `json:"publicKey"`
	BaseURL   string `json:"baseUrl"`
	CACert    string `json:"caCert"` // the gateway's self-signed certificate, if any
}

func main() {
	path := flag.String("credentials", "var/demo-merchant.json", "the merchant's credentials (shopNo, publicKey, baseUrl, caCert)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *path, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, credentialsPath string, out io.Writer) error {
	raw, err := os.ReadFile(credentialsPath)
	if err != nil {
		return err
	}
	var cr credentials
	if err := json.Unmarshal(raw, &cr); err != nil {
		return fmt.Errorf("%s: %w", credentialsPath, err)
	}
	// Trust the gateway's certificate: the system's roots, plus the
	// self-signed one of a development gateway.
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if cr.CACert != "" {
		pem, err := os.ReadFile(cr.CACert)
		if err != nil {
			return err
		}
		roots.AppendCertsFromPEM(pem)
	}
	c, err := client.New(client.Config{BaseURL: cr.BaseURL, ShopNo: cr.ShopNo, PublicKey: cr.PublicKey,
		HTTPClient: client.NewHTTPClient(roots, 4)})
	if err != nil {
		return err
	}

	acct, err := c.Account(ctx)
	if err != nil {
		return err
	}
	for _, b := range acct.Balances {
		// Exact: the decimal's text, never a float.
		fmt.Fprintf(out, "funding %s %s\n", b.Currency, b.Balance)
	}

	// A key of our own, stored with the order before the call: after a
	// crash or a lost answer, the same call with it returns the first
	// outcome instead of issuing a second card.
	createKey := client.NewIdempotencyKey()
	card, err := c.CreateCard(ctx, client.CreateCardRequest{BIN: "453201", Currency: "USD", Amount: client.MustDecimal("25.00"),
		Remark: "example"}, client.WithIdempotencyKey(createKey))
	if err != nil {
		return fmt.Errorf("create card: %w", err)
	}
	fmt.Fprintf(out, "card %s balance %s %s\n", card.CardNo, card.Balance, card.Currency)

	tr, err := c.Transfer(ctx, client.TransferRequest{CardNo: card.CardNo, Amount: client.MustDecimal("10.50"), Currency: "USD",
		Direction: client.DirectionIn})
	if err != nil {
		return fmt.Errorf("top-up: %w", err)
	}
	fmt.Fprintf(out, "transfer %s card balance %s funding %s\n", tr.TxID, tr.CardBalance, tr.FundingBalance)

	// A business failure is an *client.Error with its code: more than the
	// card holds is 1001, and nothing moved.
	_, err = c.Transfer(ctx, client.TransferRequest{CardNo: card.CardNo, Amount: client.MustDecimal("1000000.00"), Currency: "USD",
		Direction: client.DirectionOut})
	var e *client.Error
	switch {
	case errors.Is(err, client.CodeInsufficientFunds) && errors.As(err, &e):
		fmt.Fprintf(out, "refused: code %d (%s)\n", int(e.Code), e.Message)
	case err != nil:
		return err
	default:
		return errors.New("a transfer OUT beyond the card's balance succeeded")
	}

	today := time.Now().UTC().Format("2006-01-02")
	page, err := c.Bill(ctx, client.BillQuery{StartDate: today, EndDate: today, Page: 1, Size: 50})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "bill today: %d lines\n", page.Total)
	for _, l := range page.List {
		fmt.Fprintf(out, "  %d %s %s %s\n", l.BillSeq, l.Type, l.Amount, l.Currency)
	}
	return nil
}
