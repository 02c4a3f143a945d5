package api

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/merchant"
)

// settableClock is the ledger's clock in these tests: an overlap ends by
// moving it, never by sleeping.
type settableClock struct{ t atomic.Pointer[time.Time] }

func newSettableClock() *settableClock {
	c := &settableClock{}
	now := time.Now().UTC()
	c.t.Store(&now)
	return c
}
func (c *settableClock) Now() time.Time { return *c.t.Load() }
func (c *settableClock) Add(d time.Duration) {
	t := c.Now().Add(d)
	c.t.Store(&t)
}

type webhookOut struct {
	CallbackURL *string `json:"callbackUrl"`
}

type eventOut struct {
	EventID       string  `json:"eventId"`
	EventType     string  `json:"eventType"`
	Sequence      int64   `json:"sequence"`
	Status        string  `json:"status"`
	URL           *string `json:"url"`
	Attempts      int     `json:"attempts"`
	NextAttemptAt *string `json:"nextAttemptAt"`
	LastError     *string `json:"lastError"`
}

type eventsOut struct {
	Total int64      `json:"total"`
	List  []eventOut `json:"list"`
}

// TestWebhookURL: the merchant reads, sets and clears its default callback
// URL; a URL the sender would refuse is refused when given, naming the
// field, and leaves the setting as it was.
func TestWebhookURL(t *testing.T) {
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{})
	var w webhookOut
	s.request(&sh, "GET", "/shop/webhook", "").must(t, 200, 200).into(t, &w)
	if w.CallbackURL != nil {
		t.Fatalf("a new merchant has callback URL %q", *w.CallbackURL)
	}
	const url = "https://merchant.example.com/hooks?t=1"
	s.request(&sh, "PUT", "/shop/webhook", `{"callbackUrl":"`+url+`"}`).must(t, 200, 200).into(t, &w)
	if w.CallbackURL == nil || *w.CallbackURL != url {
		t.Fatalf("PUT answered %+v", w)
	}
	s.request(&sh, "GET", "/shop/webhook", "").must(t, 200, 200).into(t, &w)
	if w.CallbackURL == nil || *w.CallbackURL != url {
		t.Fatalf("GET after PUT answered %+v", w)
	}
	for _, tc := range []struct{ name, body, field string }{
		{"loopback", `{"callbackUrl":"https://127.0.0.1/hooks"}`, "callbackUrl"},
		{"localhost", `{"callbackUrl":"https://localhost/hooks"}`, "callbackUrl"},
		{"metadata", `{"callbackUrl":"http://169.254.169.254/latest"}`, "callbackUrl"},
		{"private", `{"callbackUrl":"https://10.0.0.8/hooks"}`, "callbackUrl"},
		{"scheme", `{"callbackUrl":"ftp://merchant.example/hooks"}`, "callbackUrl"},
		{"port", `{"callbackUrl":"https://merchant.example.com:70000/hooks"}`, "callbackUrl"},
		{"not a string", `{"callbackUrl":1}`, "callbackUrl"},
		{"unknown field", `{"callback_url":"https://merchant.example.com/"}`, "callback_url"},
		{"no body", ``, "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := s.request(&sh, "PUT", "/shop/webhook", tc.body).must(t, 400, 400)
			if !strings.HasPrefix(a.Message, tc.field) {
				t.Errorf("message %q does not name %s", a.Message, tc.field)
			}
		})
	}
	s.request(&sh, "GET", "/shop/webhook", "").must(t, 200, 200).into(t, &w)
	if w.CallbackURL == nil || *w.CallbackURL != url {
		t.Fatalf("a refused PUT changed the URL: %+v", w)
	}
	// Clearing: null and "" alike.
	for _, body := range []string{`{"callbackUrl":null}`, `{"callbackUrl":""}`, `{}`} {
		s.request(&sh, "PUT", "/shop/webhook", `{"callbackUrl":"`+url+`"}`).must(t, 200, 200)
		s.request(&sh, "PUT", "/shop/webhook", body).must(t, 200, 200).into(t, &w)
		if w.CallbackURL != nil {
			t.Errorf("PUT %s left %q", body, *w.CallbackURL)
		}
		if m, err := s.l.MerchantByID(context.Background(), sh.m.ID); err != nil || m.CallbackURL != "" {
			t.Errorf("PUT %s: stored %q, %v", body, m.CallbackURL, err)
		}
	}
}

// TestWebhookEvents: the merchant's events oldest first, pages that a new
// event never shifts, the status and type filters, and their 400s.
func TestWebhookEvents(t *testing.T) {
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	other := s.fundedShop()
	ctx := context.Background()
	if err := s.l.SetCallbackURL(ctx, sh.m.ID, "https://merchant.example.com/hooks"); err != nil {
		t.Fatal(err)
	}
	var cardNos []string
	for i := 0; i < 3; i++ {
		cardNos = append(cardNos, s.createCard(sh, `{"bin":"453201","currency":"USD","amount":1}`).CardNo)
	}
	s.request(&sh, "POST", "/shop/card/freeze", `{"cardNo":"`+cardNos[0]+`"}`).must(t, 200, 200)
	s.createCard(other, `{"bin":"453201","currency":"USD","amount":1}`)

	var all eventsOut
	s.request(&sh, "GET", "/shop/webhook/events?size=500", "").must(t, 200, 200).into(t, &all)
	if all.Total != 4 || len(all.List) != 4 {
		t.Fatalf("events: %+v", all)
	}
	for i, e := range all.List {
		if e.Sequence != int64(i+1) {
			t.Errorf("event %d has sequence %d: not oldest first", i, e.Sequence)
		}
	}
	// card.created goes to its request's URL alone: not sent; card.frozen
	// to the merchant's URL: pending.
	if e := all.List[0]; e.EventType != "card.created" || e.Status != "NOT_SENT" || e.URL != nil || e.NextAttemptAt != nil {
		t.Errorf("first event %+v, want card.created NOT_SENT", e)
	}
	if e := all.List[3]; e.EventType != "card.frozen" || e.Status != "PENDING" || e.URL == nil || e.NextAttemptAt == nil {
		t.Errorf("last event %+v, want card.frozen PENDING", e)
	}

	var page2 eventsOut
	s.request(&sh, "GET", "/shop/webhook/events?page=2&size=2", "").must(t, 200, 200).into(t, &page2)
	s.request(&sh, "POST", "/shop/card/freeze", `{"cardNo":"`+cardNos[1]+`"}`).must(t, 200, 200)
	var again eventsOut
	s.request(&sh, "GET", "/shop/webhook/events?page=2&size=2", "").must(t, 200, 200).into(t, &again)
	if again.Total != 5 || len(again.List) != 2 || again.List[0].EventID != page2.List[0].EventID || again.List[1].EventID != page2.List[1].EventID {
		t.Errorf("page 2 moved after an insert: %+v then %+v", page2, again)
	}

	for _, tc := range []struct {
		query string
		total int64
		types []string
	}{
		{"status=PENDING", 2, []string{"card.frozen"}},
		{"status=NOT_SENT", 3, []string{"card.created"}},
		{"status=FAILED", 0, nil},
		{"type=card.created", 3, []string{"card.created"}},
		{"type=card.created,card.frozen", 5, nil},
		{"type=card.created&type=card.frozen&status=PENDING", 2, []string{"card.frozen"}},
		{"type=remittance.status", 0, nil},
		{"status=PENDING&page=2&size=1", 2, []string{"card.frozen"}},
		{"status=PENDING&page=3&size=1", 2, nil},
	} {
		var got eventsOut
		s.request(&sh, "GET", "/shop/webhook/events?"+tc.query, "").must(t, 200, 200).into(t, &got)
		if got.Total != tc.total {
			t.Errorf("%s: total %d, want %d", tc.query, got.Total, tc.total)
		}
		for _, e := range got.List {
			if tc.types != nil && e.EventType != tc.types[0] {
				t.Errorf("%s: event %+v", tc.query, e)
			}
		}
	}
	for _, tc := range []struct{ query, field string }{
		{"status=LOST", "status"},
		{"status=pending", "status"},
		{"status=PENDING&status=FAILED", "status"},
		{"type=Card.Created", "type"},
		{"type=card", "type"},
		{"type=card..created", "type"},
		{"type=card.created.x", "type"},
		{"type=" + strings.Repeat("a", 60) + ".created", "type"},
		{"type=" + strings.TrimSuffix(strings.Repeat("card.created,", 17), ","), "type"},
		{"page=0", "page"},
		{"page=1000001", "page"},
		{"size=501", "size"},
		{"size=-1", "size"},
	} {
		a := s.request(&sh, "GET", "/shop/webhook/events?"+tc.query, "").must(t, 400, 400)
		if !strings.HasPrefix(a.Message, tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.query, a.Message, tc.field)
		}
	}
}

// TestWebhookReplay: one event sent again keeps its event_id; another
// merchant's id answers exactly what an unknown id answers; failed events
// of a bounded range are replayed, at most limit at a time, and a second
// call finds nothing more to do.
func TestWebhookReplay(t *testing.T) {
	clock := newSettableClock()
	s := newTestServer(t, serverOptions{ledgerNow: clock.Now})
	sh := s.fundedShop()
	other := s.fundedShop()
	ctx := context.Background()
	for _, m := range []shop{sh, other} {
		if err := s.l.SetCallbackURL(ctx, m.m.ID, "https://merchant.example.com/hooks"); err != nil {
			t.Fatal(err)
		}
	}
	start := clock.Now()
	for i := 0; i < 4; i++ {
		c := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":1}`)
		s.request(&sh, "POST", "/shop/card/freeze", `{"cardNo":"`+c.CardNo+`"}`).must(t, 200, 200)
		clock.Add(time.Minute)
	}
	theirs := s.createCard(other, `{"bin":"453201","currency":"USD","amount":1}`)
	s.request(&other, "POST", "/shop/card/freeze", `{"cardNo":"`+theirs.CardNo+`"}`).must(t, 200, 200)
	// Every delivery dead, as after the 24-hour window.
	if _, err := s.l.DB().ExecContext(ctx, `update deliveries set status = 'FAILED', next_attempt_at = null, attempts = 12,
		last_error = 'HTTP 503'`); err != nil {
		t.Fatal(err)
	}
	var failed eventsOut
	s.request(&sh, "GET", "/shop/webhook/events?status=FAILED", "").must(t, 200, 200).into(t, &failed)
	if failed.Total != 4 || failed.List[0].LastError == nil || *failed.List[0].LastError != "HTTP 503" || failed.List[0].Attempts != 12 {
		t.Fatalf("failed events: %+v", failed)
	}
	var theirEvents eventsOut
	s.request(&other, "GET", "/shop/webhook/events?status=FAILED", "").must(t, 200, 200).into(t, &theirEvents)

	// One event, after the merchant moved its endpoint: to the new URL.
	const moved = "https://merchant.example.com/hooks-v2"
	s.request(&sh, "PUT", "/shop/webhook", `{"callbackUrl":"`+moved+`"}`).must(t, 200, 200)
	var e eventOut
	id := failed.List[1].EventID
	if failed.List[1].EventType != "card.frozen" {
		t.Fatalf("second failed event %+v, want card.frozen", failed.List[1])
	}
	s.request(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":"`+id+`"}`).must(t, 200, 200).into(t, &e)
	if e.EventID != id || e.Status != "PENDING" || e.Attempts != 0 || e.NextAttemptAt == nil || e.URL == nil || *e.URL != moved {
		t.Errorf("replayed %+v, want pending to %s", e, moved)
	}
	s.request(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":"`+id+`"}`, "Idempotency-Key", "rp-1").must(t, 200, 200).into(t, &e)
	if e.EventID != id || e.Status != "PENDING" || e.Attempts != 0 {
		t.Errorf("replayed twice %+v", e)
	}
	s.request(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":"x"}`, "Idempotency-Key", "rp-1").must(t, 200, codeIdemConflict)
	unknown := s.request(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":"evt_nosuchevent"}`).must(t, 200, codeEventNotFound)
	foreign := s.request(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":"`+theirEvents.List[0].EventID+`"}`).must(t, 200, codeEventNotFound)
	if strings.Replace(string(foreign.raw), theirEvents.List[0].EventID, "evt_nosuchevent", 1) != string(unknown.raw) {
		t.Errorf("another merchant's event answers %s, an unknown one %s", foreign.raw, unknown.raw)
	}
	s.request(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":""}`).must(t, 400, 400)
	s.request(&sh, "POST", "/shop/webhook/events/replay", `{"eventId":"a b"}`).must(t, 400, 400)
	s.request(&sh, "POST", "/shop/webhook/events/replay", `{}`).must(t, 400, 400)

	// Failed events of a range, two at a time.
	rng := func(from, to time.Time, extra string) string {
		return fmt.Sprintf(`{"from":%q,"to":%q%s}`, from.Format(time.RFC3339), to.Format(time.RFC3339), extra)
	}
	var r struct {
		Replayed int64 `json:"replayed"`
		More     bool  `json:"more"`
	}
	body := rng(start.Add(-time.Minute), clock.Now().Add(time.Minute), `,"limit":2`)
	s.request(&sh, "POST", "/shop/webhook/events/replay-failed", body).must(t, 200, 200).into(t, &r)
	if r.Replayed != 2 || !r.More {
		t.Errorf("first call: %+v, want 2 and more", r)
	}
	s.request(&sh, "POST", "/shop/webhook/events/replay-failed", body).must(t, 200, 200).into(t, &r)
	if r.Replayed != 1 || r.More {
		t.Errorf("second call: %+v, want the last 1", r)
	}
	s.request(&sh, "POST", "/shop/webhook/events/replay-failed", body).must(t, 200, 200).into(t, &r)
	if r.Replayed != 0 || r.More {
		t.Errorf("third call: %+v, want nothing", r)
	}
	s.request(&other, "GET", "/shop/webhook/events?status=FAILED", "").must(t, 200, 200).into(t, &theirEvents)
	if theirEvents.Total != 1 {
		t.Errorf("another merchant's failed events were replayed: %+v", theirEvents)
	}
	// A range that holds no failed event.
	s.request(&sh, "POST", "/shop/webhook/events/replay-failed", rng(start.Add(-48*time.Hour), start.Add(-24*time.Hour), "")).
		must(t, 200, 200).into(t, &r)
	if r.Replayed != 0 {
		t.Errorf("an empty range replayed %d", r.Replayed)
	}
	for _, tc := range []struct{ body, field string }{
		{rng(start, start, ""), "to"},
		{rng(start, start.Add(-time.Hour), ""), "to"},
		{rng(start, start.Add(32*24*time.Hour), ""), "to"},
		{rng(start, start.Add(time.Hour), `,"limit":0`), "limit"},
		{rng(start, start.Add(time.Hour), `,"limit":1001`), "limit"},
		{rng(start, start.Add(time.Hour), `,"limit":1.5`), "limit"},
		{`{"from":"2026-11-25","to":"2026-11-26T00:00:00Z"}`, "from"},
		{`{"from":"0000-01-01T00:00:00Z","to":"0000-01-02T00:00:00Z"}`, "from"},
		{`{"from":"2026-11-25T00:00:00Z"}`, "to"},
	} {
		a := s.request(&sh, "POST", "/shop/webhook/events/replay-failed", tc.body).must(t, 400, 400)
		if !strings.HasPrefix(a.Message, tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.body, a.Message, tc.field)
		}
	}
}

type keyRollOut struct {
	Kind               string  `json:"kind"`
	Key                *string `json:"key"`
	RolledAt           string  `json:"rolledAt"`
	PreviousValidUntil *string `json:"previousValidUntil"`
}

// TestKeyRollPublic: during the overlap both keys authenticate, after it
// only the new one; a second roll during an overlap ends the oldest key at
// once, and the key that authenticated the roll is the one kept; a repeat
// with the same Idempotency-Key rolls nothing and shows no key; no key
// reaches a log line.
func TestKeyRollPublic(t *testing.T) {
	clock := newSettableClock()
	s := newTestServer(t, serverOptions{ledgerNow: clock.Now})
	sh := s.newShop(merchant.Spec{})
	k0 := sh.creds.PublicKey
	as := func(key string) *shop {
		return &shop{m: sh.m, creds: &merchant.Credentials{ShopNo: sh.creds.ShopNo, PublicKey: key}}
	}

	var r keyRollOut
	a := s.request(&sh, "POST", "/shop/keys/public/roll", `{"overlapHours":2}`, "Idempotency-Key", "roll-1").must(t, 200, 200)
	a.into(t, &r)
	if r.Kind != "public" || r.Key == nil || !strings.HasPrefix(*r.Key, "pk_") || *r.Key == k0 || r.PreviousValidUntil == nil {
		t.Fatalf("roll: %s", a.raw)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Errorf("a roll's answer may be cached: Cache-Control %q", a.header.Get("Cache-Control"))
	}
	k1 := *r.Key
	// The same request again: the first roll, without its key.
	var again keyRollOut
	a = s.request(as(k1), "POST", "/shop/keys/public/roll", `{"overlapHours":2}`, "Idempotency-Key", "roll-1").must(t, 200, 200)
	a.into(t, &again)
	if again.Key != nil || again.RolledAt != r.RolledAt || a.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed roll: %s %v", a.raw, a.header)
	}
	s.request(as(k1), "POST", "/shop/keys/public/roll", `{"overlapHours":3}`, "Idempotency-Key", "roll-1").must(t, 200, codeIdemConflict)

	// Both keys during the overlap.
	s.request(as(k0), "GET", "/shop/account", "").must(t, 200, 200)
	s.request(as(k1), "GET", "/shop/account", "").must(t, 200, 200)
	var ks struct {
		PublicKey struct {
			PreviousValidUntil *string `json:"previousValidUntil"`
		} `json:"publicKey"`
	}
	s.request(as(k1), "GET", "/shop/keys", "").must(t, 200, 200).into(t, &ks)
	if ks.PublicKey.PreviousValidUntil == nil || *ks.PublicKey.PreviousValidUntil != *r.PreviousValidUntil {
		t.Errorf("keys: %+v, want the overlap until %s", ks, *r.PreviousValidUntil)
	}
	// The overlap over: only the new key.
	clock.Add(2*time.Hour + time.Second)
	s.request(as(k0), "GET", "/shop/account", "").must(t, 401, 401)
	s.request(as(k1), "GET", "/shop/account", "").must(t, 200, 200)
	s.request(as(k1), "GET", "/shop/keys", "").must(t, 200, 200).into(t, &ks)
	if ks.PublicKey.PreviousValidUntil != nil {
		t.Errorf("keys after the overlap: %+v", ks)
	}

	// A second roll during an overlap ends the oldest key at once.
	s.request(as(k1), "POST", "/shop/keys/public/roll", `{}`).must(t, 200, 200).into(t, &r)
	k2 := *r.Key
	s.request(as(k2), "POST", "/shop/keys/public/roll", `{"overlapHours":168}`).must(t, 200, 200).into(t, &r)
	k3 := *r.Key
	s.request(as(k1), "GET", "/shop/account", "").must(t, 401, 401)
	s.request(as(k2), "GET", "/shop/account", "").must(t, 200, 200)
	s.request(as(k3), "GET", "/shop/account", "").must(t, 200, 200)
	// Overlap 0: the replaced key ends at once.
	s.request(as(k3), "POST", "/shop/keys/public/roll", `{"overlapHours":0}`).must(t, 200, 200).into(t, &r)
	if r.PreviousValidUntil != nil {
		t.Errorf("overlap 0 answered %+v", r)
	}
	k4 := *r.Key
	s.request(as(k2), "GET", "/shop/account", "").must(t, 401, 401)
	s.request(as(k3), "GET", "/shop/account", "").must(t, 401, 401)
	s.request(as(k4), "GET", "/shop/account", "").must(t, 200, 200)

	// A first roll's answer lost: the merchant rolls again with the key it
	// holds, which stays valid; the key it never saw ends.
	s.request(as(k4), "POST", "/shop/keys/public/roll", `{}`).must(t, 200, 200).into(t, &r)
	lost := *r.Key
	s.request(as(k4), "POST", "/shop/keys/public/roll", `{}`).must(t, 200, 200).into(t, &r)
	k6 := *r.Key
	s.request(as(lost), "GET", "/shop/account", "").must(t, 401, 401)
	s.request(as(k4), "GET", "/shop/account", "").must(t, 200, 200)
	s.request(as(k6), "GET", "/shop/account", "").must(t, 200, 200)
	clock.Add(25 * time.Hour)
	s.request(as(k4), "GET", "/shop/account", "").must(t, 401, 401)
	s.request(as(k6), "GET", "/shop/account", "").must(t, 200, 200)
	k4 = k6

	for _, body := range []string{`{"overlapHours":169}`, `{"overlapHours":-1}`, `{"overlapHours":1.5}`, `{"overlapHours":"24h"}`, `{"overlap":24}`, ``} {
		s.request(as(k4), "POST", "/shop/keys/public/roll", body).must(t, 400, 400)
	}
	s.request(as(k4), "GET", "/shop/account", "").must(t, 200, 200)
	for _, k := range []string{k0, k1, k2, k3, k4, lost} {
		if strings.Contains(s.logs.String(), k) {
			t.Errorf("a key is in the logs")
		}
	}
}

// TestKeyRollSigning: a roll of the signing key answers the new key once,
// shows the overlap in GET /shop/keys and refuses an overlap past 7 days.
func TestKeyRollSigning(t *testing.T) {
	clock := newSettableClock()
	s := newTestServer(t, serverOptions{ledgerNow: clock.Now})
	sh := s.newShop(merchant.Spec{})
	var r keyRollOut
	s.request(&sh, "POST", "/shop/keys/signing/roll", `{}`).must(t, 200, 200).into(t, &r)
	if r.Kind != "signing" || r.Key == nil || !strings.HasPrefix(*r.Key, "sk_") || *r.Key == sh.creds.PrivateKey || r.PreviousValidUntil == nil {
		t.Fatalf("roll: %+v", r)
	}
	rolled, _ := time.Parse(time.RFC3339, r.RolledAt)
	until, _ := time.Parse(time.RFC3339, *r.PreviousValidUntil)
	if until.Sub(rolled) != 24*time.Hour {
		t.Errorf("default overlap %s, want 24h", until.Sub(rolled))
	}
	var ks struct {
		SigningKey struct {
			PreviousValidUntil *string `json:"previousValidUntil"`
		} `json:"signingKey"`
	}
	s.request(&sh, "GET", "/shop/keys", "").must(t, 200, 200).into(t, &ks)
	if ks.SigningKey.PreviousValidUntil == nil {
		t.Errorf("keys: %+v", ks)
	}
	s.request(&sh, "POST", "/shop/keys/signing/roll", `{"overlapHours":169}`).must(t, 400, 400)
	if strings.Contains(s.logs.String(), *r.Key) {
		t.Error("the signing key is in the logs")
	}
}
