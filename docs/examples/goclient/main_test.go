package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/httpserve"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The example runs as written against the gateway's real handler over
// HTTPS, on a fresh database, with a funded merchant.
func TestExampleRuns(t *testing.T) {
	db := pgtest.NewDB(t)
	l := gatewaytest.New(t, db, gatewaytest.Options{})
	ctx := context.Background()
	m, cr, err := l.CreateMerchant(ctx, merchant.Spec{Name: "Example shop", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Deposit(ctx, m.ID, "USD", 100_000, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(api.NewServer(api.Deps{DB: db, Merchants: l.Merchants, Accounts: l.Cards, Cards: l.Cards, ReadKeys: l.Ledger,
		Bills: l.Bills, Remittances: l.Remit, Stats: l.Ledger}))
	srv.TLS = httpserve.TLSConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	certPath := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	credPath := filepath.Join(dir, "demo-merchant.json")
	raw, _ := json.Marshal(credentials{ShopNo: cr.ShopNo, PublicKey: cr.PublicKey, BaseURL: srv.URL, CACert: certPath})
	if err := os.WriteFile(credPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(ctx, credPath, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		`(?m)^funding USD 1000\.00$`,
		`(?m)^card crd_\w+ balance 25\.00 USD$`,
		`(?m)^transfer trf_\w+ card balance 35\.50 funding 964\.50$`,
		`(?m)^refused: code 1001 `,
		`(?m)^bill today: 5 lines$`, // deposit, two lines per card movement (funding and card)
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}
