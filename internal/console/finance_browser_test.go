package console_test

import (
	"context"
	"strings"
	"testing"
)

// A finance user reads cards and may replay webhooks, but takes no card
// action (docs/console.md, "Roles"), in the real browser: no action button
// on an active card nor on a frozen one, 403 on every confirmation page,
// and 403 on every action's form posted with the session's valid token —
// which the same user's webhook replay, posted alongside, shows to be
// valid. The cards are as they were, and each refusal is in the audit
// trail.
func TestFinanceUserCannotActOnCards(t *testing.T) {
	f := newFixture(t)
	active, frozen := f.cardsA[0], f.cardsA[1]
	if _, err := f.g.Cards.FreezeCard(context.Background(), f.a.ID, frozen, "lost", nil); err != nil {
		t.Fatal(err)
	}
	var event string // the freeze's card.frozen, for A's URL: finance may replay it
	if err := f.g.DB().DB.QueryRow(`select event_id from events where merchant_id = $1 and event_type = 'card.frozen'`,
		f.a.ID).Scan(&event); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.login(t, f, "fred.finance", "")
	before := len(f.auditActions(t))

	for _, card := range []string{active, frozen} {
		if got := b.open(t, f.url("/cards/"+card)); got != 200 {
			t.Fatalf("finance user on card %s: %d", card, got)
		}
		if n := eval[int](t, b, `document.querySelectorAll('#freeze, #unfreeze, #cancel').length`); n != 0 {
			t.Errorf("card %s: a finance user is shown %d card actions", card, n)
		}
	}
	tries := 0
	for _, tc := range []struct{ card, action string }{
		{active, "freeze"}, {active, "cancel"}, {frozen, "unfreeze"}, {frozen, "cancel"},
	} {
		if got := b.open(t, f.url("/cards/"+tc.card+"/"+tc.action)); got != 403 {
			t.Errorf("%s confirmation page: %d, want 403", tc.action, got)
		}
		b.open(t, f.url("/cards/"+tc.card))
		if got := b.post(t, "/cards/"+tc.card+"/"+tc.action, map[string]string{"csrf": b.csrf(t), "reason": "finance"}); got != 403 {
			t.Errorf("posted %s of %s with a valid token: %d, want 403", tc.action, tc.card, got)
		}
		tries++
	}
	// The token is good: the replay finance may do goes through.
	b.open(t, f.url("/events/"+event))
	if got := b.post(t, "/events/"+event+"/replay", map[string]string{"csrf": b.csrf(t)}); got != 303 && got != 0 {
		t.Errorf("finance user's replay with the same token: %d, want a redirect", got)
	}

	if s := f.cardStatus(t, active); s != "ACTIVE" {
		t.Errorf("the active card is %s after a finance user's tries", s)
	}
	if s := f.cardStatus(t, frozen); s != "FROZEN" {
		t.Errorf("the frozen card is %s after a finance user's tries", s)
	}
	acts := f.auditActions(t)[before:]
	if n := countOf(acts, "request.refused:refused"); n != tries {
		t.Errorf("%d refusals in the audit trail, want %d: %v", n, tries, acts)
	}
	if !strings.Contains(strings.Join(acts, " "), "event.replay:ok") {
		t.Errorf("the replay is not in the audit trail: %v", acts)
	}
}
