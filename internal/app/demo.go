package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// DemoFile is where `serve --demo` keeps the demo merchant's credentials.
const DemoFile = "demo-merchant.json"

// DemoCredentials is the content of DemoFile: what a newcomer needs to curl
// the API at once (docs/walkthrough.md).
type DemoCredentials struct {
	ShopNo     string `json:"shopNo"`
	PublicKey  string `json:"publicKey"`
	PrivateKey string `json:"privateKey"`
	BaseURL    string `json:"baseUrl"`
	CACert     string `json:"caCert,omitempty"` // the self-signed certificate, for curl --cacert
}

// demoFunding is what the demo merchant starts with, in each currency.
var demoFunding = map[string]string{"USD": "10000.00", "EUR": "10000.00"}

// ensureDemo makes sure a demo merchant exists with funded USD and EUR
// accounts and that its credentials are in the data directory, and marks
// the seeded FX rates current, so that a local gateway started days after
// its database was made still converts. It never touches operator rates.
func ensureDemo(ctx context.Context, log *slog.Logger, dataDir string, l *Services, baseURL, caCert string, rateMaxAge time.Duration) error {
	if _, err := l.FX.RestampSeedRates(ctx, rateMaxAge/2); err != nil {
		return err
	}
	path := filepath.Join(dataDir, DemoFile)
	if b, err := os.ReadFile(path); err == nil {
		var c DemoCredentials
		if json.Unmarshal(b, &c) == nil {
			if _, err := l.MerchantByShopNo(ctx, c.ShopNo); err == nil {
				c.BaseURL, c.CACert = baseURL, caCert
				log.Info("demo merchant ready", "shop_no", c.ShopNo, "credentials", path)
				return writeDemo(path, c)
			}
		}
		// A file from another database: make a new merchant.
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	m, creds, err := l.CreateMerchant(ctx, merchant.Spec{Name: "Demo Shop", Currencies: []string{"USD", "EUR"}})
	if err != nil {
		return err
	}
	for _, cur := range []string{"USD", "EUR"} {
		c := postings.MustCurrency(cur)
		minor, err := postings.ParseAmount(demoFunding[cur], c)
		if err != nil {
			return err
		}
		// The key makes a crash between here and the file harmless.
		if _, err := l.Deposit(ctx, m.ID, cur, minor, &ledger.Idempotency{Key: "demo-funding-" + cur}); err != nil {
			return err
		}
	}
	c := DemoCredentials{ShopNo: creds.ShopNo, PublicKey: creds.PublicKey, PrivateKey: creds.PrivateKey,
		BaseURL: baseURL, CACert: caCert}
	log.Info("demo merchant created", "shop_no", c.ShopNo, "credentials", path)
	return writeDemo(path, c)
}

func writeDemo(path string, c DemoCredentials) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
