package main

import (
	"github.com/paygate/gateway/api/client"
)

// creds are a merchant's /shop credentials, with the client that calls
// /shop as that merchant (api/client, the merchants' own): the two
// authentication headers, the bench's Idempotency-Key on every POST, and no
// retries, so that every failure is counted as the run's, as measured.
type creds struct {
	id         int64
	shopNo     string
	publicKey  string
	privateKey string
	shop       *client.Client
}

// newCreds makes the credentials and, when the gateway runs, the client.
func (b *bench) newCreds(id int64, shopNo, publicKey, privateKey string) (creds, error) {
	c := creds{id: id, shopNo: shopNo, publicKey: publicKey, privateKey: privateKey}
	if b.gw == nil {
		return c, nil
	}
	var err error
	c.shop, err = b.gw.ShopClient(shopNo, publicKey, client.NoRetry)
	return c, err
}
