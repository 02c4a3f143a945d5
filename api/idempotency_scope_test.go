package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
)

// postEndpoints are every POST of /shop (routes.go) with a valid body for
// a card of the test (cards are fresh, ACTIVE, holding 10.00 USD).
var postEndpoints = []struct {
	path string
	body func(card string) string
}{
	{"/shop/card/create", func(string) string { return `{"bin":"453201","currency":"USD","amount":"1.00"}` }},
	{"/shop/card/balance/batch", func(card string) string { return fmt.Sprintf(`{"cardNos":[%q]}`, card) }},
	{"/shop/card/freeze", func(card string) string { return fmt.Sprintf(`{"cardNo":%q}`, card) }},
	{"/shop/card/unfreeze", func(card string) string { return fmt.Sprintf(`{"cardNo":%q}`, card) }},
	{"/shop/card/cancel", func(card string) string { return fmt.Sprintf(`{"cardNo":%q}`, card) }},
	{"/shop/card/transfer", func(card string) string {
		return fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"USD","direction":"OUT"}`, card)
	}},
	{"/shop/remittance/create", func(string) string { return remitBody(benDE, `"1.00"`, "EUR", "") }},
}

// TestIdempotencyKeyIsPerEndpoint: an Idempotency-Key used on one POST and
// sent again on another is 1008 on the second, which has no effect and
// never answers the first one's answer. Every ordered pair of POST
// endpoints, through the HTTP API; the unfreeze of an ACTIVE card and the
// freeze of the same card have the same body, so only the path tells them
// apart.
func TestIdempotencyKeyIsPerEndpoint(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.newShop(merchant.Spec{Currencies: []string{"USD", "EUR"}})
	s.deposit(sh, "USD", 100_000_00)
	s.deposit(sh, "EUR", 100_000_00)
	newCard := func() string {
		return s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"10.00"}`).CardNo
	}
	for _, a := range postEndpoints {
		for _, b := range postEndpoints {
			if a.path == b.path {
				continue
			}
			t.Run(a.path+" then "+b.path, func(t *testing.T) {
				key := "reuse:" + a.path + ":" + b.path
				first := s.request(&sh, "POST", a.path, a.body(newCard()), "Idempotency-Key", key).must(t, 200, 200)

				// b is sent on a card of its own that it could act on.
				card := newCard()
				before, entries := s.cardInfo(sh, card), s.count(`select count(*) from entries where merchant_id = ?`, sh.m.ID)
				second := s.request(&sh, "POST", b.path, b.body(card), "Idempotency-Key", key).must(t, 200, codeIdemConflict)
				if replayOf(second, first) {
					t.Errorf("%s answered like %s: %s", b.path, a.path, second.raw)
				}
				after := s.cardInfo(sh, card)
				if after.Status != before.Status || after.Balance.String() != before.Balance.String() ||
					s.count(`select count(*) from entries where merchant_id = ?`, sh.m.ID) != entries {
					t.Errorf("%s had an effect: card %+v → %+v", b.path, before, after)
				}
			})
		}
	}
}

// TestIdempotencyKeyIsPerMethod: the same key, path and body with another
// method is no replay either: only POST is routed there (405).
func TestIdempotencyKeyIsPerMethod(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	card := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"10.00"}`).CardNo
	for _, e := range postEndpoints {
		key := "method:" + e.path
		first := s.request(&sh, "POST", e.path, e.body(card), "Idempotency-Key", key)
		for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			a := s.request(&sh, method, e.path, e.body(card), "Idempotency-Key", key).must(t, 405, 405)
			if replayOf(a, first) {
				t.Errorf("%s %s answered like POST: %s", method, e.path, a.raw)
			}
		}
	}
}

// replayOf reports an answer that looks like a replay of first: the replay
// header, or first's data (when it has any: freeze answers null).
func replayOf(a, first *answer) bool {
	return a.header.Get("Idempotent-Replayed") != "" ||
		(string(first.Data) != "null" && string(a.Data) == string(first.Data))
}

// TestIdempotencyKeyOnBatch: the balance batch, a read, claims its key
// (another request with it is 1008) but stores no answer: the same batch
// again reads again, and is no replay.
func TestIdempotencyKeyOnBatch(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	sh := s.fundedShop()
	card := s.createCard(sh, `{"bin":"453201","currency":"USD","amount":"10.00"}`).CardNo
	batch := fmt.Sprintf(`{"cardNos":[%q]}`, card)
	s.request(&sh, "POST", "/shop/card/balance/batch", batch, "Idempotency-Key", "b-1").must(t, 200, 200)
	s.request(&sh, "POST", "/shop/card/transfer", fmt.Sprintf(`{"cardNo":%q,"amount":"1.00","currency":"USD","direction":"OUT"}`, card)).must(t, 200, 200)
	again := s.request(&sh, "POST", "/shop/card/balance/batch", batch, "Idempotency-Key", "b-1").must(t, 200, 200)
	if again.header.Get("Idempotent-Replayed") != "" || !strings.Contains(string(again.Data), `"balance":9.00`) {
		t.Errorf("a repeated batch answered %s %s, want a fresh read", again.header.Get("Idempotent-Replayed"), again.Data)
	}
	s.request(&sh, "POST", "/shop/card/balance/batch", fmt.Sprintf(`{"cardNos":[%q,%q]}`, card, card),
		"Idempotency-Key", "b-1").must(t, 200, codeIdemConflict)
	// Another shop has its own keys.
	other := s.fundedShop()
	s.request(&other, "POST", "/shop/card/balance/batch", batch, "Idempotency-Key", "b-1").must(t, 200, 200)
}
