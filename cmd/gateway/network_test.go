package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var internalRe = regexp.MustCompile(`internal network API on (https?)://(\S+)`)

// internalAddr waits for serve to print the internal API's address.
func (s *server) internalAddr() string {
	s.t.Helper()
	deadline := time.Now().Add(commandTimeout)
	for {
		if m := internalRe.FindStringSubmatch(s.stdout.String()); m != nil {
			if m[1] != s.scheme {
				s.t.Errorf("internal API on %s, public on %s: want the same", m[1], s.scheme)
			}
			return m[2]
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("serve printed no internal API address:\n%s", s.stdout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNetworkSimulator runs serve, then spends a card from the shell with
// `gateway network …` against its internal API: over HTTPS trusting the
// data directory's certificate, with the token serve generated there.
func TestNetworkSimulator(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	// The network bounds as serve reads them (docs/network.md, "Bounds").
	g.env["GATEWAY_NETWORK_MESSAGE_MAX"] = "USD:100.00,JPY:1000000"
	g.env["GATEWAY_NETWORK_UNMATCHED_REFUND_MAX"] = "USD:1.00"
	s := g.serve("--network-over-capture-pct", "10")
	addr := s.internalAddr()

	tokenFile := filepath.Join(g.env["GATEWAY_DATA_DIR"], "internal-token")
	fi, err := os.Stat(tokenFile)
	if err != nil {
		t.Fatalf("serve made no token file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", tokenFile, fi.Mode().Perm())
	}
	token, _ := os.ReadFile(tokenFile)

	// A merchant with a 50.00 USD card, through /shop.
	c := g.createMerchant("Simulated shop", "USD")
	g.deposit(c.ShopNo, "USD", "500.00")
	req, _ := http.NewRequest("POST", s.url("/shop/card/create"), strings.NewReader(`{"bin":"453201","currency":"USD","amount":"50.00"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Shop-No", c.ShopNo)
	req.Header.Set("X-Public-Key", c.PublicKey)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Code int `json:"code"`
		Data struct {
			CardNo string `json:"cardNo"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil || card.Code != 200 {
		t.Fatalf("card create: %v %+v", err, card)
	}
	cardNo := card.Data.CardNo

	net := func(args ...string) result {
		t.Helper()
		return g.run(append(append([]string{"network"}, args...), "--addr", addr)...)
	}
	mustNet := func(v any, args ...string) result {
		t.Helper()
		r := net(args...)
		if r.err != nil {
			t.Fatalf("gateway network %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
		}
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			t.Fatalf("gateway network %s printed %q: %v", strings.Join(args, " "), r.stdout, err)
		}
		return r
	}

	var auth struct {
		AuthID    string          `json:"authId"`
		Approved  bool            `json:"approved"`
		Code      string          `json:"code"`
		Amount    json.RawMessage `json:"amount"`
		Available json.RawMessage `json:"available"`
	}
	r := mustNet(&auth, "authorize", "--card-no", cardNo, "--amount", "10.00", "--currency", "USD")
	if !auth.Approved || auth.Code != "00" || !strings.HasPrefix(auth.AuthID, "auth_") ||
		string(auth.Amount) != "10.00" || string(auth.Available) != "40.00" {
		t.Errorf("authorize printed %s", r.stdout)
	}
	if !regexp.MustCompile(`messageId cli-[0-9a-f]{20}`).MatchString(r.stderr) {
		t.Errorf("authorize did not print the message id it made: %q", r.stderr)
	}
	// The same message id again: the first answer, no second hold.
	var again, first struct {
		AuthID    string          `json:"authId"`
		Available json.RawMessage `json:"available"`
	}
	mustNet(&first, "authorize", "--card-no", cardNo, "--amount", "5", "--currency", "usd", "--message-id", "sim-1")
	mustNet(&again, "authorize", "--card-no", cardNo, "--amount", "5", "--currency", "usd", "--message-id", "sim-1")
	if first.AuthID == "" || again.AuthID != first.AuthID || string(again.Available) != "35.00" {
		t.Errorf("repeated message: %+v then %+v", first, again)
	}
	// A decline is an answer, not a failure.
	var decline struct {
		Approved bool   `json:"approved"`
		Code     string `json:"code"`
	}
	mustNet(&decline, "authorize", "--card-no", cardNo, "--amount", "100", "--currency", "USD")
	if decline.Approved || decline.Code != "51" {
		t.Errorf("decline %+v", decline)
	}

	var hold struct {
		Status   string          `json:"status"`
		Captured json.RawMessage `json:"captured"`
		Released json.RawMessage `json:"released"`
	}
	mustNet(&hold, "clear", "--auth-id", auth.AuthID, "--amount", "7.50")
	if hold.Status != "CLEARED" || string(hold.Captured) != "7.50" || string(hold.Released) != "2.50" {
		t.Errorf("clear %+v", hold)
	}
	mustNet(&hold, "reverse", "--auth-id", first.AuthID)
	if hold.Status != "REVERSED" || string(hold.Released) != "5.00" {
		t.Errorf("reverse %+v", hold)
	}
	var refund struct {
		Credited  string          `json:"credited"`
		Available json.RawMessage `json:"available"`
		CreatedAt string          `json:"createdAt"`
	}
	mustNet(&refund, "refund", "--card-no", cardNo, "--amount", "2.50", "--currency", "USD", "--message-id", "sim-refund-1")
	if refund.Credited != "card" || string(refund.Available) != "45.00" { // 50 − 7.50 + 2.50
		t.Errorf("refund %+v", refund)
	}
	reconcileSimulatedRefund(t, g, "sim-refund-1", cardNo, "2.50", refund.CreatedAt)
	var attempts struct {
		List []struct {
			Code string `json:"code"`
		} `json:"list"`
	}
	mustNet(&attempts, "attempts", "--card-no", cardNo)
	var codes []string
	for _, a := range attempts.List {
		codes = append(codes, a.Code)
	}
	if strings.Join(codes, ",") != "51,00,00" {
		t.Errorf("attempts %v", codes)
	}
	var shown struct {
		Status   string          `json:"status"`
		Captured json.RawMessage `json:"captured"`
	}
	mustNet(&shown, "show", "--auth-id", auth.AuthID)
	if shown.Status != "CLEARED" || string(shown.Captured) != "7.50" {
		t.Errorf("show %+v", shown)
	}
	// Above the largest message of its currency: declined 13.
	mustNet(&decline, "authorize", "--card-no", cardNo, "--amount", "100.01", "--currency", "USD")
	if decline.Approved || decline.Code != "13" {
		t.Errorf("above the largest message: %+v", decline)
	}
	var small struct {
		AuthID string `json:"authId"`
	}
	mustNet(&small, "authorize", "--card-no", cardNo, "--amount", "10.00", "--currency", "USD")

	// Error envelopes exit non-zero, naming the flag when there is one.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"clear", "--auth-id", auth.AuthID, "--amount", "1.00"}, 1, "1202"},
		{[]string{"authorize", "--card-no", cardNo, "--amount", "1.005", "--currency", "USD"}, 2, "--amount: USD allows at most 2 decimals"},
		{[]string{"show", "--auth-id", "auth_nosuchauth000000000"}, 1, "1201"},
		{[]string{"authorize", "--card-no", cardNo, "--currency", "USD"}, 2, "--amount is required"},
		// 10 % over-capture: 11.00 on 10.00 is the most.
		{[]string{"clear", "--auth-id", small.AuthID, "--amount", "11.01"}, 1, "1007"},
		// 7.50 captured, 2.50 refunded, 1.00 unmatched allowed: 6.00 left.
		{[]string{"refund", "--card-no", cardNo, "--amount", "6.01", "--currency", "USD"}, 1, "1007"},
	} {
		r := net(tc.args...)
		if r.code() != tc.code || r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("network %s: exit %d %v, want %d naming %q", strings.Join(tc.args, " "), r.code(), r.err, tc.code, tc.want)
		}
	}
	// A wrong token is refused.
	bad := &gateway{t: t, env: map[string]string{}}
	for k, v := range g.env {
		bad.env[k] = v
	}
	bad.env["GATEWAY_INTERNAL_TOKEN"] = "itk_not-the-right-token"
	if r := bad.run("network", "attempts", "--card-no", cardNo, "--addr", addr); r.code() != 1 || !strings.Contains(fmt.Sprint(r.err), "401") {
		t.Errorf("wrong token: exit %d %v", r.code(), r.err)
	}
	s.mustStop()
	// The token was never logged or printed.
	tok := strings.TrimSpace(string(token))
	if tok == "" || strings.Contains(s.stdout.String()+s.stderr.String(), tok) {
		t.Errorf("the token %q is empty or appears in serve's output", tok)
	}
	g.auditOK()
}

// internalURL is path on the internal listener (its /metrics: the process's
// metrics are there, not on the /shop listener).
func (s *server) internalURL(path string) string { return s.scheme + "://" + s.internalAddr() + path }
