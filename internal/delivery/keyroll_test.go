package delivery_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client/receiver"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/merchant"
)

// captured is one callback as it arrived: its body and headers.
type captured struct {
	body   []byte
	header http.Header
}

// TestSigningKeyRollOver: during the overlap of a signing-key roll every
// callback is signed with both keys — X-Sign with the old one, which a
// receiver that knows only the spec keeps checking, X-Signatures with both —
// so the reference receiver accepts it with the old key, with the new key,
// or with both. After the overlap only the new key signs: the reference
// receiver with the new key accepts, the old key alone is refused.
func TestSigningKeyRollOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	rc, m, creds, c := newCapturedShop(t, f, "Roller")
	d := f.dispatcher(nil)
	old := creds.PrivateKey
	roll, err := f.l.RollSigningKey(ctx, m.ID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := roll.Key
	if next == "" || next == old {
		t.Fatalf("roll answered key %q", next)
	}

	accepts := func(cb captured, keys ...string) bool {
		h := receiver.HandlerKeys(keys, receiver.Options{Now: f.clock.Now}, func(context.Context, receiver.Event) error { return nil })
		req := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(cb.body))
		req.Header = cb.header.Clone()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code == http.StatusOK
	}
	last := func() captured { return rc.last(t) }

	// During the overlap.
	if _, err := f.l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	round(t, d)
	cb := last()
	ts := cb.header.Get(receiver.HeaderTimestamp)
	if want := receiver.Sign(cb.body, ts, old); cb.header.Get(receiver.HeaderSign) != want {
		t.Errorf("X-Sign during the overlap is not the old key's signature")
	}
	if sigs := strings.Fields(cb.header.Get(receiver.HeaderSignatures)); len(sigs) != 2 ||
		sigs[0] != receiver.Sign(cb.body, ts, old) || sigs[1] != receiver.Sign(cb.body, ts, next) {
		t.Errorf("X-Signatures during the overlap: %q", cb.header.Get(receiver.HeaderSignatures))
	}
	for _, tc := range []struct {
		name string
		keys []string
		ok   bool
	}{
		{"old key", []string{old}, true},
		{"new key", []string{next}, true},
		{"both keys", []string{old, next}, true},
		{"another key", []string{"sk_someone_else"}, false},
	} {
		if accepts(cb, tc.keys...) != tc.ok {
			t.Errorf("during the overlap, a receiver with the %s: accepted %v, want %v", tc.name, !tc.ok, tc.ok)
		}
	}
	// The spec's receiver, X-Sign and one key, still works with the old key.
	if err := receiver.Verify(cb.body, ts, cb.header.Get(receiver.HeaderSign), old, f.clock.Now(), 0); err != nil {
		t.Errorf("spec verification with the old key during the overlap: %v", err)
	}

	// After the overlap.
	f.clock.Add(time.Hour + time.Second)
	if _, err := f.l.Cards.UnfreezeCard(ctx, m.ID, c.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	round(t, d)
	cb = last()
	ts = cb.header.Get(receiver.HeaderTimestamp)
	if cb.header.Get(receiver.HeaderSign) != receiver.Sign(cb.body, ts, next) || cb.header.Get(receiver.HeaderSignatures) != receiver.Sign(cb.body, ts, next) {
		t.Errorf("after the overlap: X-Sign %q, X-Signatures %q, want the new key's alone", cb.header.Get(receiver.HeaderSign), cb.header.Get(receiver.HeaderSignatures))
	}
	if !accepts(cb, next) || !accepts(cb, old, next) {
		t.Error("after the overlap a receiver with the new key refused a genuine callback")
	}
	if accepts(cb, old) {
		t.Error("after the overlap the old key still verifies")
	}
}

// TestSigningKeySecondRoll: a second roll during an overlap keeps the older
// key, which every receiver has (X-Sign still carries it), and ends the
// newer one, which receivers may never have been given.
func TestSigningKeySecondRoll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	m, creds, err := f.l.CreateMerchant(ctx, merchant.Spec{Name: "Roller", Currencies: []string{"USD"}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.l.RollSigningKey(ctx, m.ID, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.l.RollSigningKey(ctx, m.ID, 2*time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.PreviousValidUntil == nil || !second.PreviousValidUntil.Equal(f.clock.Now().Add(2*time.Hour)) {
		t.Errorf("second roll: overlap until %v", second.PreviousValidUntil)
	}
	if _, err := f.l.Deposit(ctx, m.ID, "USD", 100_00, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1_00,
		CallbackURL: f.recv.srv.URL}, nil); err != nil {
		t.Fatal(err)
	}
	claimed, err := f.store.ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	keys := claimed[0].SigningKeys()
	if len(keys) != 2 || keys[0] != creds.PrivateKey || keys[1] != second.Key {
		t.Errorf("signing keys after a second roll: the original first %v, the newest second %v; the lost one present %v",
			keys[0] == creds.PrivateKey, keys[len(keys)-1] == second.Key, keys[0] == first.Key || keys[len(keys)-1] == first.Key)
	}
}
