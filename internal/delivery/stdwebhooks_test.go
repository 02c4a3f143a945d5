package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client/receiver/signature"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
)

// capturer is a loopback receiver that keeps every callback as it arrived.
type capturer struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []captured
}

func newCapturer(t *testing.T) *capturer {
	c := &capturer{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.got = append(c.got, captured{body: body, header: r.Header.Clone()})
		c.mu.Unlock()
		_, _ = w.Write([]byte(`{"code":200,"message":"ok"}`))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *capturer) last(t *testing.T) captured {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		t.Fatal("no callback arrived")
	}
	return c.got[len(c.got)-1]
}

// newCapturedShop is a merchant whose callbacks go to a capturer, funded,
// with one card whose events the test makes.
func newCapturedShop(t *testing.T, f *fixture, name string) (*capturer, *merchant.Merchant, *merchant.Credentials, *cards.Card) {
	t.Helper()
	ctx := context.Background()
	rc := newCapturer(t)
	m, creds, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: name, Currencies: []string{"USD"}, CallbackURL: rc.srv.URL + "/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	f.l.Merchants.MerchantChanged(m.ID)
	if _, err := f.l.Deposit(ctx, m.ID, "USD", 100_00, nil); err != nil {
		t.Fatal(err)
	}
	c, err := f.l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 10_00}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rc, m, creds, c
}

// verifyStd checks a captured callback's Standard Webhooks headers with
// secret, as a receiver at time now would.
func verifyStd(cb captured, secret string, now time.Time) error {
	h := cb.header
	return signature.VerifyStandard(cb.body, h.Get(signature.HeaderWebhookID), h.Get(signature.HeaderWebhookTimestamp),
		h.Get(signature.HeaderWebhookSignature), []string{secret}, now, 0)
}

// TestStandardWebhooksOnEveryDelivery: every delivery carries the Standard
// Webhooks headers beside the spec's (webhook-id the event id,
// webhook-timestamp = X-Timestamp, one v1 signature per secret in force); a
// merchant created before the secrets existed gets one lazily; a roll with
// an overlap signs with both secrets, a second roll keeps the older one, and
// after the overlap only the newest signs. The unmodified npm libraries
// standardwebhooks and svix verify the real deliveries.
func TestStandardWebhooksOnEveryDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	rc, m, creds, c := newCapturedShop(t, f, "Std")
	d := f.dispatcher(nil)
	flip := true
	deliver := func() captured { // one more card event, delivered
		t.Helper()
		toggle(t, f, m.ID, c.CardNo, &flip)
		round(t, d)
		return rc.last(t)
	}
	roll := func(overlap time.Duration) string {
		t.Helper()
		r, err := f.store.RollWebhookSecret(ctx, m.ID, overlap)
		if err != nil || signature.CheckSecret(r.Secret) != nil {
			t.Fatalf("roll: %+v, %v", r, err)
		}
		return r.Secret
	}

	// No secret yet: the first delivery makes one, and carries the headers.
	cb0 := deliver()
	var body struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(cb0.body, &body); err != nil {
		t.Fatal(err)
	}
	h := cb0.header
	if h.Get("webhook-id") != body.EventID || h.Get("webhook-timestamp") != h.Get("X-Timestamp") ||
		len(strings.Fields(h.Get("webhook-signature"))) != 1 || !strings.HasPrefix(h.Get("webhook-signature"), "v1,") {
		t.Fatalf("first delivery's Standard Webhooks headers: id %q (event %q), timestamp %q (X-Timestamp %q), signature %q",
			h.Get("webhook-id"), body.EventID, h.Get("webhook-timestamp"), h.Get("X-Timestamp"), h.Get("webhook-signature"))
	}
	if h.Get("X-Sign") == "" || signature.Verify(cb0.body, h.Get("X-Timestamp"), h.Get("X-Sign"), creds.PrivateKey, f.clock.Now(), 0) != nil {
		t.Error("the spec's X-Sign is gone or wrong beside the Standard Webhooks headers")
	}

	s1 := roll(0) // the merchant reads its secret by rolling, at once
	cb1 := deliver()
	s2 := roll(time.Hour)
	cb2 := deliver()
	s3 := roll(2 * time.Hour) // during the overlap: s1, the older, stays
	cb3 := deliver()
	now := f.clock.Now()
	for _, tc := range []struct {
		name   string
		cb     captured
		secret string
		ok     bool
	}{
		{"after a roll without overlap, the new secret", cb1, s1, true},
		{"after a roll without overlap, the lazy secret", cb0, s1, false},
		{"during an overlap, the old secret", cb2, s1, true},
		{"during an overlap, the new secret", cb2, s2, true},
		{"second roll: the older secret stays", cb3, s1, true},
		{"second roll: the newest secret", cb3, s3, true},
		{"second roll: the middle secret ends", cb3, s2, false},
	} {
		if err := verifyStd(tc.cb, tc.secret, now); (err == nil) != tc.ok {
			t.Errorf("%s: verified %v (%v), want %v", tc.name, err == nil, err, tc.ok)
		}
	}
	if n := len(strings.Fields(cb2.header.Get("webhook-signature"))); n != 2 {
		t.Errorf("during an overlap webhook-signature has %d signatures, want 2", n)
	}

	// The npm reference libraries, on the same captured requests (their
	// clock is the real one: these were all sent within the last minutes).
	tampered := cb1
	tampered.body = append([]byte(nil), cb1.body...)
	tampered.body[len(tampered.body)-2] ^= 1
	cases := []struct {
		cb     captured
		secret string
		ok     bool
	}{{cb1, s1, true}, {cb2, s1, true}, {cb2, s2, true}, {cb3, s1, true}, {cb3, s3, true}, {cb3, s2, false}, {tampered, s1, false}}
	in := make([]nodeCase, len(cases))
	for i, tc := range cases {
		hs := map[string]string{}
		for k := range tc.cb.header {
			hs[strings.ToLower(k)] = tc.cb.header.Get(k)
		}
		in[i] = nodeCase{Headers: hs, Body: string(tc.cb.body), Secret: tc.secret}
	}
	for i, v := range verifyWithNode(t, in) {
		std, svix := v.accepted()
		if std != cases[i].ok || svix != cases[i].ok {
			t.Errorf("npm case %d: standardwebhooks %v, svix %v; want accepted %v", i, v.StandardWebhooks, v.Svix, cases[i].ok)
		}
	}

	// After the overlap only the newest secret signs.
	f.clock.Add(2*time.Hour + time.Second)
	cb4 := deliver()
	if err := verifyStd(cb4, s3, f.clock.Now()); err != nil {
		t.Errorf("after the overlap the newest secret refuses: %v", err)
	}
	if err := verifyStd(cb4, s1, f.clock.Now()); !errors.Is(err, signature.ErrBadSignature) {
		t.Errorf("after the overlap the old secret still verifies: %v", err)
	}
}
