package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/network"
)

// networkClient sends authorizations the way the issuer processor does: to
// the gateway's internal network API (GATEWAY_INTERNAL_ADDR, bearer token
// GATEWAY_INTERNAL_TOKEN, POST /network/authorize). When the gateway under
// test does not serve that API yet, it falls back to ledger.Authorize in
// this process, on the same database, and says so.
type networkClient struct {
	b    *bench
	http bool   // over the internal API
	url  string // …/network/authorize
	hc   *http.Client
	note string
}

func (b *bench) newNetworkClient() *networkClient {
	return &networkClient{b: b}
}

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
		c, err := net.DialTimeout("tcp", b.gw.internalAddr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return fallback("the gateway does not listen on GATEWAY_INTERNAL_ADDR: no internal network API in this build")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The internal listener: TLS with the gateway's certificate, or plain
	// HTTP on a private network. Try both.
	plain := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 2*b.o.concurrency + 16, MaxIdleConnsPerHost: 2*b.o.concurrency + 16, DisableCompression: true}}
	for _, try := range []struct {
		scheme string
		hc     *http.Client
	}{{"https", b.gw.client}, {"http", plain}} {
		nc.url, nc.hc = try.scheme+"://"+b.gw.internalAddr+"/network/authorize", try.hc
		status, _, err := nc.post("probe-"+time.Now().Format("150405.000000"), card)
		if err != nil {
			continue
		}
		switch {
		case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
			return fallback(fmt.Sprintf("POST /network/authorize answered %d", status))
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return fallback(fmt.Sprintf("the internal API refused the bearer token (%d)", status))
		case status >= 500:
			return fallback(fmt.Sprintf("the internal API answered %d to a probe", status))
		}
		nc.http = true
		nc.note = "over the internal network API (" + strings.ToUpper(try.scheme) + ", bearer token)"
		return "POST " + nc.url
	}
	return fallback("the internal listener answers neither HTTPS nor HTTP")
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
	status, body, err := nc.post(messageID, card)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("POST /network/authorize: HTTP %d: %.200s", status, body)
	}
	return decisionCode(body), nil
}

func (nc *networkClient) post(messageID, card string) (int, []byte, error) {
	// The amount is a JSON number of whole units: 1 USD whichever way the
	// API reads it (money or minor units), both well inside a card's funds.
	body := []byte(`{"messageId":"` + messageID + `","cardNo":"` + card +
		`","amount":1,"currency":"USD","merchantName":"BENCH STORE","mcc":"5411","merchantCountry":"US"}`)
	ctx, cancel := context.WithTimeout(nc.b.ctx, 65*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, nc.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+nc.b.gw.internalToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := nc.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// decisionCode finds the ISO 8583 response code in an answer, with or
// without the {code, message, data} envelope.
func decisionCode(raw []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return "?"
	}
	if d, ok := top["data"]; ok && len(d) > 0 && d[0] == '{' {
		var inner map[string]json.RawMessage
		if json.Unmarshal(d, &inner) == nil {
			top = inner
		}
	}
	for _, k := range []string{"responseCode", "code"} {
		var s string
		if v, ok := top[k]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	var approved bool
	if v, ok := top["approved"]; ok && json.Unmarshal(v, &approved) == nil {
		if approved {
			return "approved"
		}
		return "declined"
	}
	return "?"
}
