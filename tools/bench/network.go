package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/netclient"
	"github.com/paygate/gateway/internal/network"
)

// networkClient sends authorizations the way the issuer processor does: to
// the gateway's internal network API (GATEWAY_INTERNAL_ADDR, bearer token
// GATEWAY_INTERNAL_TOKEN, POST /network/authorize), through
// internal/netclient, once per operation (no retries: a failure is the
// run's). When the gateway under test does not serve that API, it falls
// back to ledger.Authorize in this process, on the same database, and says
// so.
type networkClient struct {
	b    *bench
	http bool // over the internal API
	nc   *netclient.Client
	note string
}

func (b *bench) newNetworkClient() *networkClient {
	return &networkClient{b: b}
}

// oneUSD is every authorization's amount: 1 USD, well inside a card's
// funds.
var oneUSD = client.MustDecimal("1")

// probe decides how authorizations are sent and returns a description.
func (nc *networkClient) probe(card string) string {
	b := nc.b
	fallback := func(why string) string {
		nc.http = false
		nc.note = "in-process ledger.Authorize in the bench process, not over HTTPS (" + why + "): the decision path without HTTP; gateway CPU/RSS not involved"
		return "in-process ledger.Authorize"
	}
	if b.gw == nil {
		return fallback("no gateway")
	}
	deadline := time.Now().Add(b.o.internalWait)
	for {
		c, err := net.DialTimeout("tcp", b.gw.InternalAddr(), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return fallback("the gateway does not listen on GATEWAY_INTERNAL_ADDR: no internal network API in this build")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var err error
	if nc.nc, err = b.gw.NetClient(client.NoRetry); err != nil {
		return fallback(err.Error())
	}
	_, err = nc.authorizeHTTP("probe-"+time.Now().Format("150405.000000"), card)
	var e *client.Error
	switch {
	case err == nil:
	case !errors.As(err, &e) || e.Status == 0:
		return fallback(fmt.Sprintf("the internal listener does not answer: %v", err))
	case e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed:
		return fallback(fmt.Sprintf("POST /network/authorize answered %d", e.Status))
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return fallback(fmt.Sprintf("the internal API refused the bearer token (%d)", e.Status))
	case e.Status >= 500:
		return fallback(fmt.Sprintf("the internal API answered %d to a probe", e.Status))
	}
	nc.http = true
	nc.note = "over the internal network API (HTTPS, bearer token)"
	return "POST " + b.gw.InternalURL() + "/network/authorize"
}

// authorize sends one authorization of 1 USD and returns the response code.
func (nc *networkClient) authorize(messageID, card string) (string, error) {
	if !nc.http {
		res, err := nc.b.network.Authorize(nc.b.ctx, network.AuthRequest{MessageID: messageID, CardNo: card, Amount: 100, Currency: "USD",
			MerchantName: "BENCH STORE", MCC: "5411", MerchantCountry: "US"})
		if err != nil {
			return "", err
		}
		return res.Code, nil
	}
	return nc.authorizeHTTP(messageID, card)
}

func (nc *networkClient) authorizeHTTP(messageID, card string) (string, error) {
	ctx, cancel := context.WithTimeout(nc.b.ctx, 65*time.Second)
	defer cancel()
	d, err := nc.nc.Authorize(ctx, netclient.AuthorizeRequest{MessageID: messageID, CardNo: card, Amount: oneUSD, Currency: "USD",
		MerchantName: "BENCH STORE", MCC: "5411", MerchantCountry: "US"})
	if err != nil {
		return "", err
	}
	return d.Code, nil
}
