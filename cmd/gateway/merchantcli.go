package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/paygate/gateway/api/client"
)

// The flags of the merchant developer's commands (`listen`, `trigger`):
// they speak to the gateway's /shop API with the merchant's API
// credentials only, as any merchant's program does, never to its database.
// The credentials may come from the environment (PAYGATE_SHOP_NO,
// PAYGATE_PUBLIC_KEY) to keep them off command lines and shell histories.
type merchantFlags struct {
	baseURL, shopNo, key, cacert *string
}

func defineMerchantFlags(e *env, fs *flag.FlagSet) *merchantFlags {
	return &merchantFlags{
		baseURL: fs.String("base-url", "https://127.0.0.1:8443", "the gateway's base URL"),
		shopNo:  fs.String("shop-no", e.getenv("PAYGATE_SHOP_NO"), "the merchant's shop number (default $PAYGATE_SHOP_NO)"),
		key:     fs.String("key", "", "the merchant's public key pk_… (default $PAYGATE_PUBLIC_KEY)"),
		cacert: fs.String("cacert", "", "a PEM certificate to trust for the gateway's TLS, such as its self-signed "+
			"var/tls/cert.pem (default: the system's roots)"),
	}
}

// client builds the API client of the flags.
func (f *merchantFlags) client(e *env) (*client.Client, error) {
	key := *f.key
	if key == "" {
		key = e.getenv("PAYGATE_PUBLIC_KEY")
	}
	if *f.shopNo == "" || key == "" {
		return nil, usageError("--shop-no and --key (or PAYGATE_SHOP_NO and PAYGATE_PUBLIC_KEY) are required")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	if *f.cacert != "" {
		pemBytes, err := os.ReadFile(*f.cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, usageError("--cacert: " + *f.cacert + " holds no PEM certificate")
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return client.New(client.Config{BaseURL: *f.baseURL, ShopNo: *f.shopNo, PublicKey: key,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: tr}})
}
