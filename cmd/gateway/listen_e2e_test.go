package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client/receiver/signature"
)

// listenReceiver is a developer's local receiver on loopback (port 0): it
// keeps what arrives and answers {"code":200}.
type listenReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []captured
}

type captured struct {
	body   []byte
	header http.Header
}

func newListenReceiver(t *testing.T) *listenReceiver {
	r := &listenReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, captured{body: body, header: req.Header.Clone()})
		r.mu.Unlock()
		_, _ = w.Write([]byte(`{"code":200,"message":"ok"}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// waitFor waits for a callback of event type typ.
func (r *listenReceiver) waitFor(t *testing.T, typ string) captured {
	t.Helper()
	deadline := time.Now().Add(commandTimeout)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, c := range r.got {
			var ev struct {
				EventType string `json:"event_type"`
			}
			if json.Unmarshal(c.body, &ev) == nil && ev.EventType == typ {
				r.mu.Unlock()
				return c
			}
		}
		r.mu.Unlock()
		time.Sleep(20 * time.Millisecond) // polling a condition, not a synchronisation
	}
	t.Fatalf("listen forwarded no %s within %s", typ, commandTimeout)
	return captured{}
}

// TestListenAndTrigger: `gateway trigger card.frozen` makes a test
// merchant's card and freezes it through the API; `gateway listen`, with
// the merchant's API credentials only and the gateway's SSRF settings
// untouched (no GATEWAY_CALLBACK_ALLOW_PRIVATE), forwards the events to a
// loopback receiver signed exactly as a real delivery — X-Sign with the
// signing key given, webhook-signature with the secret given — and prints
// each with its answer. A live merchant's trigger is refused before
// anything is made.
func TestListenAndTrigger(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	s := g.serve()
	out := g.mustRun("merchant", "create", "--name", "Listen shop", "--currencies", "USD", "--test")
	var m credentials
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	g.deposit(m.ShopNo, "USD", "100.00")
	live := g.createMerchant("Live shop", "USD")
	cert := fingerprintRe.FindStringSubmatch(s.stdout.String())[1]
	creds := func(c credentials) []string {
		return []string{"--base-url", s.url(""), "--cacert", cert, "--shop-no", c.ShopNo, "--key", c.PublicKey}
	}

	rcv := newListenReceiver(t)
	secret, err := signature.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append(append([]string{"gateway", "listen"}, creds(m)...), "--forward-to", rcv.srv.URL+"/hooks",
			"--webhook-secret", secret, "--signing-key", m.PrivateKey, "--interval", "100ms"), g.getenv, &stdout, &stderr)
	}()
	deadline := time.Now().Add(commandTimeout)
	for !strings.Contains(stderr.String(), "listen: ready") {
		if time.Now().After(deadline) {
			t.Fatalf("listen did not get ready: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	trig := g.mustRun(append(append([]string{"trigger"}, creds(m)...), "card.frozen")...)
	if !strings.Contains(trig, `"triggered": "card.frozen"`) && !strings.Contains(trig, `"triggered":"card.frozen"`) {
		t.Errorf("trigger printed %s", trig)
	}
	cb := rcv.waitFor(t, "card.frozen")
	h := cb.header
	now := time.Now()
	if err := signature.Verify(cb.body, h.Get("X-Timestamp"), h.Get("X-Sign"), m.PrivateKey, now, 0); err != nil {
		t.Errorf("X-Sign does not verify with the merchant's signing key: %v", err)
	}
	if err := signature.VerifyStandard(cb.body, h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"),
		[]string{secret}, now, 0); err != nil {
		t.Errorf("webhook-signature does not verify with the secret given: %v", err)
	}
	var ev struct {
		EventID string `json:"event_id"`
		ShopNo  string `json:"shopNo"`
	}
	if err := json.Unmarshal(cb.body, &ev); err != nil || ev.EventID != h.Get("webhook-id") || ev.ShopNo != m.ShopNo {
		t.Errorf("forwarded body %s (webhook-id %q): %v", cb.body, h.Get("webhook-id"), err)
	}
	deadline = time.Now().Add(commandTimeout)
	for !strings.Contains(stdout.String(), "card.frozen "+ev.EventID+" -> 200") {
		if time.Now().After(deadline) {
			t.Fatalf("listen did not print the event with its answer: %s", stdout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every other type trigger makes reaches the receiver through listen.
	for _, typ := range triggerTypes() {
		if typ == "card.frozen" {
			continue
		}
		g.mustRun(append([]string{"trigger", typ}, creds(m)...)...)
		rcv.waitFor(t, typ)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("listen ended with %v", err)
	}

	// A live merchant: refused, and nothing made.
	r := g.run(append(append([]string{"trigger"}, creds(live)...), "card.created")...)
	if r.err == nil || !strings.Contains(r.err.Error(), "live merchant") {
		t.Errorf("trigger for a live merchant: %v\n%s", r.err, r.stdout)
	}
	g.mustFail("not an event type", append(append([]string{"trigger"}, creds(m)...), "card.melted")...)
}

// TestWebhookEndpointCommands: the operator's endpoint commands add (the
// secret printed once), list, change, roll and delete a merchant's
// endpoints (endpoint one disabled like any), refuse a URL the gateway
// would not call (naming the flag) and the 17th endpoint.
func TestWebhookEndpointCommands(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	m := g.createMerchant("Endpoints shop", "USD")
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	out := g.mustRun("webhook", "endpoint", "add", "--shop-no", m.ShopNo, "--url", "https://merchant.example.com/two", "--types", "card.frozen")
	if err := json.Unmarshal([]byte(out), &ep); err != nil || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("add printed %s (%v)", out, err)
	}
	list := g.mustRun("webhook", "endpoint", "list", "--shop-no", m.ShopNo)
	if strings.Count(list, `"id"`) != 2 || strings.Contains(list, "whsec_") {
		t.Errorf("list printed %s", list)
	}
	// Endpoint one is disabled and given types like any endpoint.
	var eps []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(list), &eps); err != nil || len(eps) != 2 {
		t.Fatalf("list printed %s (%v)", list, err)
	}
	if set := g.mustRun("webhook", "endpoint", "set", "--shop-no", m.ShopNo, "--id", eps[0].ID, "--enabled", "false", "--types", "card.frozen"); !strings.Contains(set, `"enabled": false`) || !strings.Contains(set, `"card.frozen"`) {
		t.Errorf("set of endpoint one printed %s", set)
	}
	if set := g.mustRun("webhook", "endpoint", "set", "--shop-no", m.ShopNo, "--id", ep.ID, "--enabled", "false", "--types", "all"); !strings.Contains(set, `"enabled": false`) {
		t.Errorf("set printed %s", set)
	}
	if roll := g.mustRun("webhook", "endpoint", "roll", "--shop-no", m.ShopNo, "--id", ep.ID, "--overlap-hours", "0"); !strings.Contains(roll, "whsec_") {
		t.Errorf("roll printed %s", roll)
	}
	g.mustFail("url", "webhook", "endpoint", "add", "--shop-no", m.ShopNo, "--url", "http://127.0.0.1:9/hooks")
	g.mustFail("types", "webhook", "endpoint", "add", "--shop-no", m.ShopNo, "--url", "https://merchant.example.com/x", "--types", "card.melted")
	for range 14 {
		g.mustRun("webhook", "endpoint", "add", "--shop-no", m.ShopNo, "--url", "https://merchant.example.com/more")
	}
	g.mustFail("at most 16", "webhook", "endpoint", "add", "--shop-no", m.ShopNo, "--url", "https://merchant.example.com/17")
	g.mustRun("webhook", "endpoint", "delete", "--shop-no", m.ShopNo, "--id", ep.ID)
	g.mustFail("not found", "webhook", "endpoint", "delete", "--shop-no", m.ShopNo, "--id", ep.ID)
}
