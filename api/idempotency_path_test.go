package api

import (
	"fmt"
	"testing"
)

// TestIdempotencyKeyOnAnotherPathWithTheSameBody: a key used to freeze a
// card and sent again, with a byte-identical body, to unfreeze or cancel
// that same card is 1008 and has no effect. Nothing but the path tells the
// two requests apart, so this fails if the path ever leaves the request's
// fingerprint (TestIdempotencyKeyIsPerEndpoint sends each endpoint its own
// card: there the bodies differ too).
func TestIdempotencyKeyOnAnotherPathWithTheSameBody(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	for _, then := range []string{"/shop/card/unfreeze", "/shop/card/cancel"} {
		t.Run("freeze then "+then, func(t *testing.T) {
			card := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"10.00"}`).CardNo
			body := fmt.Sprintf(`{"cardNo":%q}`, card)
			key := "same-body:" + then
			s.request(&sh, "POST", "/shop/card/freeze", body, "Idempotency-Key", key).must(t, 200, codeOK)
			before := s.cardInfo(sh, card)
			if before.Status != "FROZEN" {
				t.Fatalf("after the freeze the card is %s", before.Status)
			}
			entries := s.count(`select count(*) from entries where merchant_id = ?`, sh.m.ID)

			a := s.request(&sh, "POST", then, body, "Idempotency-Key", key)
			if a.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("%s was answered with the freeze's stored answer", then)
			}
			a.must(t, 200, codeIdemConflict)

			after := s.cardInfo(sh, card)
			if after.Status != "FROZEN" || after.Balance.String() != before.Balance.String() ||
				s.count(`select count(*) from entries where merchant_id = ?`, sh.m.ID) != entries {
				t.Errorf("%s had an effect: card %+v → %+v", then, before, after)
			}
			// The key still belongs to the freeze: repeating it is a replay.
			again := s.request(&sh, "POST", "/shop/card/freeze", body, "Idempotency-Key", key).must(t, 200, codeOK)
			if again.header.Get("Idempotent-Replayed") == "" {
				t.Errorf("the freeze repeated with its key is no replay: %s", again.raw)
			}
		})
	}
}
