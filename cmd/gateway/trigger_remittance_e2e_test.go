package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paygate/gateway/api/client"
)

// TestTriggerRemittanceStatus: `gateway trigger remittance.status` makes a
// test merchant a remittance to a sandbox beneficiary and moves it through
// its lifecycle on the real gateway: the merchant's callback URL receives
// remittance.status for SCREENING, IN_FLIGHT and SETTLED, in that order,
// and the remittance reads SETTLED. A currency without a sandbox
// beneficiary is refused naming the ones there are.
func TestTriggerRemittanceStatus(t *testing.T) {
	t.Parallel()
	g, s, ctx := newCallbackGateway(t)
	m := g.createTestMerchant("Trigger remit shop", "USD", "100.00")
	next, _ := receiveCallbacks(ctx, t, g, m.ShopNo, m.PrivateKey)
	cert := fingerprintRe.FindStringSubmatch(s.stdout.String())[1]
	creds := []string{"--base-url", s.url(""), "--cacert", cert, "--shop-no", m.ShopNo, "--key", m.PublicKey}

	var printed struct {
		Triggered string   `json:"triggered"`
		Objects   []string `json:"objects"`
	}
	trig := g.mustRun(append([]string{"trigger", "remittance.status"}, creds...)...)
	if err := json.Unmarshal([]byte(trig), &printed); err != nil || printed.Triggered != "remittance.status" || len(printed.Objects) != 1 {
		t.Fatalf("trigger printed %s (%v)", trig, err)
	}
	tx := printed.Objects[0]
	var steps []string
	for len(steps) == 0 || steps[len(steps)-1] != "SETTLED" {
		e := next(client.EventRemittanceStatus).(*client.RemittanceEventData)
		if e.TxID != tx {
			t.Fatalf("remittance.status of %s, want %s", e.TxID, tx)
		}
		steps = append(steps, e.Status)
	}
	if got := strings.Join(steps, " "); got != "SCREENING IN_FLIGHT SETTLED" {
		t.Errorf("remittance.status callbacks: %s", got)
	}
	q, err := s.shopClient(t, m.ShopNo, m.PublicKey).Remittance(ctx, tx)
	if err != nil || q.Status != "SETTLED" {
		t.Errorf("the triggered remittance: %+v, %v", q, err)
	}

	r := g.run(append([]string{"trigger", "remittance.status", "--currency", "JPY"}, creds...)...)
	if r.err == nil || !strings.Contains(r.err.Error(), "USD or EUR") {
		t.Errorf("trigger in JPY: %v\n%s", r.err, r.stdout)
	}
}
